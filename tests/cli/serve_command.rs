//! `sum2act serve` as a process: it answers on loopback until stopped, and `serve import-cache`
//! converts StableToolBench's cache files.

use serde_json::{Value, json};

use crate::common;
use crate::common::tools::data_dir;

#[test]
fn serve_command_answers_on_loopback_until_stopped() {
    let served = common::Test::new()
        .arg("--data")
        .arg(data_dir())
        .args(["serve", "--port", "0", "--fault-rate", "0"])
        .serve();
    let (url, line) = (served.url.clone(), &served.line);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/virtual"),
        "{line}"
    );
    let reply = common::tools::call_unknown(&url, "Nowhere", "no_such_tool", "x");
    drop(served);
    assert_eq!(reply.unwrap().error, "Message error...");
}

#[test]
fn import_cache_converts_python_repr_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("stb/Data/theclique_for_Data");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("transfermarkt_search.json"),
        r#"{"{'name': 'Lionel Messi'}": {"error": "", "response": "Messi"}, "{'name': ": {"error": "", "response": ""}}"#,
    )
    .unwrap();
    let dest = tmp.path().join("ours");
    common::Test::new()
        .arg("serve")
        .arg("import-cache")
        .arg(tmp.path().join("stb"))
        .arg(&dest)
        .run()
        .success()
        .stdout_has("imported 1 entries from 1 files");
    let out: Value = serde_json::from_str(
        &std::fs::read_to_string(dest.join("Data/theclique/transfermarkt_search.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        out,
        json!({"{\"name\":\"Lionel Messi\"}": {"error": "", "response": "Messi"}})
    );
    common::Test::new()
        .args(["serve", "import-cache", "/definitely/not/here", "x"])
        .run()
        .failure(2);
}
