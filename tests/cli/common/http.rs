//! Loopback HTTP stand-ins for tests that have no runtime of their own.

use std::net::SocketAddr;

/// Serves `app` on loopback from its own thread and single-threaded runtime; its address. The
/// server lives as long as the test process.
pub fn serve_on_thread(app: axum::Router) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let _ = axum::serve(listener, app).await;
        });
    });
    rx.recv().unwrap()
}

/// A judge's OpenAI chat-completion reply saying `content`, with this (prompt, completion) usage.
pub fn judge_reply(content: &str, (prompt, completion): (u32, u32)) -> serde_json::Value {
    serde_json::json!({
        "model": "mock-judge",
        "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion}
    })
}
