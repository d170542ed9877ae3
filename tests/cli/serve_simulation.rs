//! LLM simulation in the embedded server: the model's reply is served where it parses, the schema
//! simulator answers where it never does, and hybrid mode asks the model only where no template
//! gives the reply's shape.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::common::tools::{
    catalog, config, data_dir, default_args, functions, server, write_record_desk,
};
use sum2act_core::toolbench::{Catalog, Function};
use sum2act_core::tools::{ReplySource, ToolEnv};
use sum2act_server::simulate::{gives_shape, parse_template};
use sum2act_server::{SimulationMode, VirtualApi};

/// A temporary catalogue of one tool with an API whose reply shape must be inferred and one with a
/// data template: the LLM-simulation tests need both, whether or not `../shared/toolbench` is present.
fn inferred_and_templated_catalog() -> (tempfile::TempDir, Arc<Catalog>) {
    let tmp = tempfile::tempdir().unwrap();
    write_record_desk(tmp.path());
    let catalog = catalog(tmp.path());
    (tmp, catalog)
}

/// The API whose reply shape must be inferred: one required parameter, no template with data.
fn inferred_api(catalog: &Catalog) -> Function {
    functions(catalog)
        .into_iter()
        .find(|f| f.required.len() == 1 && parse_template(&f.doc).is_none_or(|t| !gives_shape(&t)))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_simulation_answers_and_falls_back_to_the_schema() {
    use sum2act_core::llm::scripted::ScriptedLlm;
    let (_tmp, catalog) = inferred_and_templated_catalog();
    // An API without a template that carries data: the model's reply is taken as it is.
    let f = inferred_api(&catalog);
    let args = json!({ f.required[0].clone(): "needle-argument" }).to_string();
    let model = Arc::new(ScriptedLlm::from_replies(vec![
        "```json\n{\"error\": \"\", \"response\": {\"answer\": \"from the model\"}}\n```".into(),
    ]));
    let api = VirtualApi::new(catalog.clone(), None).with_llm(model.clone(), SimulationMode::Llm);
    let (h, s) = server(api).await;
    let env = ToolEnv::new(Arc::new(s), config());
    let obs = env.caller(vec![f.clone()]).call(&f.name, &args).await;
    assert_eq!(obs.source, ReplySource::Llm, "{}", obs.text);
    assert_eq!(obs.response, json!({"answer": "from the model"}));
    let seen = model.requests();
    let prompt: String = seen[0].messages.iter().map(|m| m.content.clone()).collect();
    assert!(
        prompt.contains("needle-argument") && prompt.contains(&f.doc.api_name),
        "{prompt}"
    );
    h.shutdown().await;

    // A model that never answers usable JSON: three attempts, then the schema simulator.
    let broken = Arc::new(ScriptedLlm::from_replies(vec![
        "no".into(),
        "still no".into(),
        "{}".into(),
    ]));
    let (h, s) =
        server(VirtualApi::new(catalog, None).with_llm(broken.clone(), SimulationMode::Llm)).await;
    let env = ToolEnv::new(Arc::new(s), config());
    let obs = env.caller(vec![f.clone()]).call(&f.name, &args).await;
    assert_eq!(obs.source, ReplySource::Simulated, "{}", obs.text);
    assert!(!obs.failed);
    assert_eq!(broken.requests().len(), 3);
    h.shutdown().await;

    // An API with a template: the model is asked for the template's shape, and a reply without the
    // template's fields is refused and asked again.
    let g = functions(&self::catalog(&data_dir()))
        .into_iter()
        .find(|g| {
            parse_template(&g.doc).is_some_and(|t| {
                t.is_object() && gives_shape(&t) && t.as_object().is_some_and(|m| m.len() <= 8)
            })
        })
        .unwrap();
    let template = parse_template(&g.doc).unwrap_or_default();
    let shaped: serde_json::Map<String, Value> = template
        .as_object()
        .map(|m| m.keys().map(|k| (k.clone(), json!("x"))).collect())
        .unwrap_or_default();
    let shaped_reply = json!({"error": "", "response": shaped}).to_string();
    let model = Arc::new(ScriptedLlm::from_replies(vec![
        "{\"error\": \"\", \"response\": {\"answer\": \"ignores the template\"}}".into(),
        shaped_reply,
    ]));
    let (h, s) = server(
        VirtualApi::new(self::catalog(&data_dir()), None)
            .with_llm(model.clone(), SimulationMode::Llm),
    )
    .await;
    let env = ToolEnv::new(Arc::new(s), config());
    let obs = env
        .caller(vec![g.clone()])
        .call(&g.name, &Value::Object(default_args(&g)).to_string())
        .await;
    assert_eq!(obs.source, ReplySource::Llm, "{}", obs.text);
    assert_eq!(obs.response, Value::Object(shaped));
    let seen = model.requests();
    assert_eq!(seen.len(), 2);
    assert!(
        matches!(
            seen[0].response_format,
            sum2act_core::llm::ResponseFormat::JsonSchema { .. }
        ),
        "{:?}",
        seen[0].response_format
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_simulation_asks_the_model_only_where_the_shape_is_inferred() {
    use sum2act_core::llm::scripted::ScriptedLlm;
    let (_tmp, catalog) = inferred_and_templated_catalog();
    let inferred = inferred_api(&catalog);
    let templated = functions(&catalog)
        .into_iter()
        .find(|g| parse_template(&g.doc).is_some_and(|t| gives_shape(&t)))
        .unwrap();
    let model = Arc::new(ScriptedLlm::from_replies(vec![
        "{\"error\": \"\", \"response\": {\"answer\": \"from the model\"}}".into(),
    ]));
    let api = VirtualApi::new(catalog, None).with_llm(model.clone(), SimulationMode::Hybrid);
    let (h, s) = server(api).await;
    let env = ToolEnv::new(Arc::new(s), config());
    let caller = env.caller(vec![inferred.clone(), templated.clone()]);
    let args = json!({ inferred.required[0].clone(): "x" }).to_string();
    let obs = caller.call(&inferred.name, &args).await;
    assert_eq!(obs.source, ReplySource::Llm, "{}", obs.text);
    assert_eq!(obs.response, json!({"answer": "from the model"}));
    let obs = caller
        .call(
            &templated.name,
            &Value::Object(default_args(&templated)).to_string(),
        )
        .await;
    assert_eq!(obs.source, ReplySource::Simulated, "{}", obs.text);
    assert_eq!(
        model.requests().len(),
        1,
        "the templated API must not reach the model"
    );
    h.shutdown().await;
}
