//! Serving an axum router with the limits a public-facing server needs and `axum::serve` lacks: a
//! timeout for reading request headers (a slow client cannot hold a connection open forever) and a
//! cap on concurrent connections (beyond it, new connections wait in the listen backlog). Used by
//! `serve` (the tool server) and `serve-llm`. A handler whose client disconnects is dropped by hyper,
//! which is what lets `serve-llm` stop generating for it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Connection limits of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time a client has to send a request's headers (HTTP/1).
    pub header_read_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            max_connections: 256,
        }
    }
}

/// Longest wait for connections in flight to finish after the shutdown signal.
const DRAIN: Duration = Duration::from_secs(30);

/// Serves `app` on `listener` under `limits` until `shutdown` completes, then lets the requests in
/// flight finish (up to 30 s).
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            p = slots.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let stream = tokio::select! {
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
        let service = TowerToHyperService::new(app.clone());
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
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
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut c = TcpStream::connect(addr).await.unwrap();
            c.write_all(b"GET /health HTTP/1.1\r\n").await.unwrap();
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
}
