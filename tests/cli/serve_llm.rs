//! `sum2act serve-llm`: the configured model behind an OpenAI-compatible endpoint. Here the model is a
//! replay directory (no weights needed), recorded through the library; a client then talks to the
//! served endpoint as Python tools would.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;
use sum2act_core::llm::openai::OpenAiClient;
use sum2act_core::llm::replay::Recorder;
use sum2act_core::llm::scripted::ScriptedLlm;
use sum2act_core::llm::{CompletionRequest, LlmClient, LlmError, Message};

/// Kills the server when the test ends, pass or fail.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn serves_recorded_answers_over_openai_http() {
    let dir = tempfile::tempdir().unwrap();
    let question =
        CompletionRequest::new("serve", vec![Message::user("What is 2+2?")]).with_max_tokens(16);
    let recorder = Recorder::new(ScriptedLlm::from_replies(vec!["4".into()]), dir.path()).unwrap();
    recorder.complete(&question).await.unwrap();

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sum2act"));
    for var in [
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "SUM2ACT_MODEL",
        "SUM2ACT_CONFIG",
    ] {
        cmd.env_remove(var);
    }
    let mut child = Child(
        cmd.args(["serve-llm", "--port", "0", "--replay"])
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.split_whitespace().last().unwrap().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "served on loopback: {line}"
    );

    let client = OpenAiClient::new(&url, None, None, Duration::from_secs(10)).unwrap();
    assert_eq!(
        client.list_models().await.unwrap(),
        vec!["scripted".to_string()]
    );
    let answer = client.complete(&question).await.unwrap();
    assert_eq!(answer.content, "4");
    assert_eq!(answer.usage.prompt_tokens, 10);

    // An unrecorded request is refused (and not worth retrying), never answered with something made up.
    let other =
        CompletionRequest::new("serve", vec![Message::user("What is 3+3?")]).with_max_tokens(16);
    let err = client.complete(&other).await.unwrap_err();
    assert!(
        matches!(err, LlmError::Server { status: 400, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("no recording"), "{err}");

    // Malformed bodies get OpenAI-style 400s that name the field.
    let resp = reqwest::Client::new()
        .post(format!("{url}/chat/completions"))
        .json(&json!({"messages": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("messages")
    );
}
