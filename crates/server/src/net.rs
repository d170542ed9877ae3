//! Serving an axum router with the limits a public-facing server needs and `axum::serve` lacks: a
//! timeout for reading request headers (a slow client cannot hold a connection open forever) and a
//! cap on concurrent connections (beyond it, new connections wait in the listen backlog). Used by
//! `serve` (the tool server) and `serve-llm`. A handler whose client disconnects is dropped by hyper,
//! which is what lets `serve-llm` stop generating for it.
//!
//! A new connection takes a serving slot only once its first request's headers are in: clients that
//! trickle their headers (slowloris) wait apart, up to [`WAITING_PER_SLOT`] per slot, each for at most
//! the header timeout, so however many of them there are (within that bound) a client that sends its
//! request at once is served at once.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// Connection limits of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time a client has to send a request's headers (HTTP/1).
    pub header_read_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

/// Seconds a client has to send its request headers (`--header-timeout`).
pub const DEFAULT_HEADER_TIMEOUT_SECS: u64 = 10;
/// Connections served at once (`--max-connections`).
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// Longest wait for connections in flight to finish after the shutdown signal.
const DRAIN: Duration = Duration::from_secs(30);

/// Connections still sending their first request's headers, per serving slot.
pub const WAITING_PER_SLOT: usize = 4;

/// Header bytes read before a connection is handed over anyway (hyper then answers 431 if too long).
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Serves `app` on `listener` under `limits` until `shutdown` completes, then lets the requests in
/// flight finish (up to 30 s).
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let waiting = Arc::new(Semaphore::new(
        limits.max_connections.max(1) * WAITING_PER_SLOT,
    ));
    let graceful = GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    tokio::pin!(shutdown);
    loop {
        let waiting_permit = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            p = waiting.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let mut stream = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little rather than spin.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let (slots, builder, app) = (slots.clone(), builder.clone(), app.clone());
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let head = match tokio::time::timeout(
                limits.header_read_timeout,
                read_head(&mut stream),
            )
            .await
            {
                Ok(Ok(head)) => head,
                // Too slow, gone, or closed before a request: nothing to serve.
                _ => return,
            };
            drop(waiting_permit);
            let Ok(permit) = slots.acquire_owned().await else {
                return;
            };
            let service = TowerToHyperService::new(app);
            let io = TokioIo::new(Prefixed {
                head,
                at: 0,
                stream,
            });
            let conn = builder
                .serve_connection_with_upgrades(io, service)
                .into_owned();
            if let Err(e) = watcher.watch(conn).await {
                tracing::debug!("connection ended: {e}");
            }
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still in flight after {DRAIN:?}; stopping anyway");
    }
    Ok(())
}

/// Reads until the end of the first request's headers (a blank line; HTTP/2's preface has one too),
/// or [`MAX_HEAD_BYTES`]; an error when the client closes first.
async fn read_head(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        // Search only where a blank line could have been completed by this chunk.
        let from = head.len().saturating_sub(3);
        head.extend_from_slice(&chunk[..n]);
        if head[from..].windows(4).any(|w| w == b"\r\n\r\n") || head.len() >= MAX_HEAD_BYTES {
            return Ok(head);
        }
    }
}

/// A connection whose first bytes were already read: they are read again first.
struct Prefixed {
    head: Vec<u8>,
    at: usize,
    stream: TcpStream,
}

impl AsyncRead for Prefixed {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.at < this.head.len() {
            let n = buf.remaining().min(this.head.len() - this.at);
            buf.put_slice(&this.head[this.at..this.at + n]);
            this.at += n;
            if this.at == this.head.len() {
                this.head = Vec::new();
                this.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Prefixed {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    async fn start(limits: Limits) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/health", get(|| async { "ok" }));
        tokio::spawn(serve(listener, app, limits, std::future::pending()));
        addr
    }

    /// Reads until the server closes the connection or `wait` passes; returns what was read and
    /// whether the connection was closed.
    async fn read_all(stream: &mut TcpStream, wait: Duration) -> (String, bool) {
        let mut buf = Vec::new();
        let closed = tokio::time::timeout(wait, stream.read_to_end(&mut buf))
            .await
            .is_ok();
        (String::from_utf8_lossy(&buf).to_string(), closed)
    }

    #[tokio::test]
    async fn a_client_that_never_finishes_its_headers_is_disconnected() {
        let addr = start(Limits {
            header_read_timeout: Duration::from_millis(300),
            ..Limits::default()
        })
        .await;
        let mut slow = TcpStream::connect(addr).await.unwrap();
        slow.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let (_, closed) = read_all(&mut slow, Duration::from_secs(5)).await;
        assert!(closed, "the slow client is still connected");
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[tokio::test]
    async fn connections_beyond_the_limit_wait_for_a_free_slot() {
        let addr = start(Limits {
            header_read_timeout: Duration::from_secs(30),
            max_connections: 2,
        })
        .await;
        // Two kept-alive connections that were served once hold both slots.
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut c = TcpStream::connect(addr).await.unwrap();
            c.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                .await
                .unwrap();
            held.push(c);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut third = TcpStream::connect(addr).await.unwrap();
        third
            .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let (reply, _) = read_all(&mut third, Duration::from_millis(400)).await;
        assert!(reply.is_empty(), "served beyond the limit: {reply}");
        held.clear();
        let (reply, closed) = read_all(&mut third, Duration::from_secs(5)).await;
        assert!(closed && reply.contains("200 OK"), "{reply}");
    }

    #[tokio::test]
    async fn clients_slow_to_send_headers_take_no_slot() {
        let addr = start(Limits {
            header_read_timeout: Duration::from_secs(30),
            max_connections: 2,
        })
        .await;
        let mut slow = Vec::new();
        for _ in 0..2 * WAITING_PER_SLOT - 1 {
            let mut c = TcpStream::connect(addr).await.unwrap();
            c.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
                .await
                .unwrap();
            slow.push(c);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut normal = TcpStream::connect(addr).await.unwrap();
        normal
            .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let (reply, closed) = read_all(&mut normal, Duration::from_secs(2)).await;
        assert!(closed && reply.contains("200 OK"), "{reply}");
        // A slow client that finishes its headers is served too, its first bytes intact.
        slow[0]
            .write_all(b"Connection: close\r\n\r\n")
            .await
            .unwrap();
        let (reply, _) = read_all(&mut slow[0], Duration::from_secs(2)).await;
        assert!(reply.contains("200 OK") && reply.ends_with("ok"), "{reply}");
    }
}
