//! `--strict-params`: a call with a parameter the API does not declare goes through by default (as
//! ToolBench sends it) and is refused with a parameter error under the flag.

use crate::common;
use crate::hardening::endpoint;

use common::Test;
use serde_json::Value;

/// The scripted model, with an undeclared `zz_undeclared` argument added to every real tool call (a
/// function call, or a call of Sum2Act's JSON reply in rounds).
fn with_extra_argument(req: &Value) -> (u16, Value) {
    let mut reply = common::mock_openai::reply(req);
    if let Some(f) = reply.pointer_mut("/choices/0/message/tool_calls/0/function")
        && f["name"] != "Finish"
    {
        let mut args: Value = f["arguments"]
            .as_str()
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        if let Some(m) = args.as_object_mut() {
            m.insert("zz_undeclared".into(), Value::from("x"));
        }
        f["arguments"] = Value::from(args.to_string());
    }
    // Sum2Act in rounds proposes its calls in a JSON reply.
    if let Some(content) = reply.pointer_mut("/choices/0/message/content")
        && let Some(mut v) = content
            .as_str()
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
        && let Some(calls) = v.get_mut("calls").and_then(Value::as_array_mut)
    {
        for call in calls {
            if let Some(m) = call["args"].as_object_mut() {
                m.insert("zz_undeclared".into(), Value::from("x"));
            }
        }
        *content = Value::from(v.to_string());
    }
    (200, reply)
}

/// The first step's tool call and observation after `run` on sample query 101.
fn first_step(strict: bool) -> (Value, Value) {
    let model = endpoint(with_extra_argument);
    let out = tempfile::tempdir().unwrap();
    let mut test = Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .env("SUM2ACT_MODEL", "mock")
        .args(["run", "--query-id", "101", "--subset", "G1_instruction"]);
    if strict {
        test = test.arg("--strict-params");
    }
    let done = test.arg("--out").arg(out.path()).run().success().no_panic();
    let path = out.path().join("G1_instruction/101_sum2act.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), done.stdout()));
    let file: Value = serde_json::from_str(&text).unwrap();
    let step = file["sum2act"]["steps"][0].clone();
    (step["arguments"].clone(), step["observation"].clone())
}

#[test]
fn undeclared_parameters_pass_by_default_and_are_refused_with_strict_params() {
    let (args, obs) = first_step(false);
    assert!(args.to_string().contains("zz_undeclared"), "{args}");
    assert_ne!(obs["failed"], true, "{obs}");
    assert!(
        ["cache", "simulated"].contains(&obs["source"].as_str().unwrap_or("")),
        "{obs}"
    );

    let (args, obs) = first_step(true);
    assert!(args.to_string().contains("zz_undeclared"), "{args}");
    let text = obs.to_string();
    assert!(
        text.contains("Parameter error") && text.contains("zz_undeclared"),
        "{obs}"
    );
}
