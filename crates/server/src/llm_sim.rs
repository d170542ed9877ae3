//! LLM simulation of an API (StableToolBench's GPT fallback): the API's documentation, a few recorded
//! examples and the arguments go to the configured model, which answers as the API would. Unlike
//! StableToolBench, the parameters are part of the documentation shown, the examples are whole and
//! successful (`server::examples`), a template that is a recorded error is shown as "shape unknown",
//! what earlier replies of the world fixed about the values the call names is given as facts not to
//! contradict (`server::world::entities`), and the reply is constrained to and checked against the
//! template's shape.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::reply_schema::{missing_fields, reply_schema};
use super::simulate::{gives_shape, template_is_error};
use super::world::Fact;
use sum2act_core::llm::{CompletionRequest, LlmClient, Message, ResponseFormat};
use sum2act_core::prompts::{PromptName, Prompts};
use sum2act_core::toolbench::ApiDoc;
use sum2act_core::tools::{ReplySource, ToolReply};

const ATTEMPTS: usize = 3;

/// What one simulation is given besides the API's documentation.
pub struct Given<'a> {
    /// The API's parsed template (an error-shaped one is shown as "shape unknown").
    pub template: Option<&'a Value>,
    /// Why the template, recorded for other arguments, may not be this call's shape
    /// (`template_fit`): it is then shown as an example, not enforced.
    pub template_for_other_call: Option<String>,
    /// Recorded `(arguments, {"error", "response"})` pairs of the API.
    pub recorded: &'a [(String, Value)],
    pub args: &'a Map<String, Value>,
    /// What earlier replies of the world fixed about values the call names.
    pub facts: &'a [Fact],
}

pub struct LlmSimulator {
    llm: Arc<dyn LlmClient>,
}

impl LlmSimulator {
    pub fn new(llm: Arc<dyn LlmClient>) -> Self {
        LlmSimulator { llm }
    }

    /// Asks the model up to three times for a reply that parses; the error names the last problem.
    pub async fn simulate(
        &self,
        tool_description: &str,
        doc: &ApiDoc,
        given: &Given<'_>,
    ) -> Result<ToolReply, String> {
        let request = self.request(tool_description, doc, given)?;
        let template = given.template.filter(|t| !template_is_error(t));
        let template = template.filter(|_| given.template_for_other_call.is_none());
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            match self.llm.complete(&request).await {
                Ok(c) => match parse_reply(&c.content) {
                    Ok(mut reply) => match missing_fields(&reply.response, template) {
                        None => {
                            for f in super::world::counts::reconcile(&mut reply.response) {
                                tracing::debug!(
                                    "count `{}` {} set to its list's {}",
                                    f.field,
                                    f.was,
                                    f.now
                                );
                            }
                            return Ok(reply);
                        }
                        Some(why) => last = why,
                    },
                    Err(e) => last = e,
                },
                Err(e) => last = e.to_string(),
            }
        }
        Err(last)
    }

    /// The completion request: the two prompts, and the template's shape as the response format.
    fn request(
        &self,
        tool_description: &str,
        doc: &ApiDoc,
        given: &Given<'_>,
    ) -> Result<CompletionRequest, String> {
        let shape = match given.template {
            Some(t) if template_is_error(t) => json!(format!(
                "unknown: the documented example reply is an error message ({}), not the API's output; \
                 infer the success reply's shape from the description, the parameters and the recorded examples",
                t
            )),
            // All nulls, one generic field, a list of nulls: nothing to copy (simulator requests 593,
            // 686, 903 showed `{"user": "NoneType"}` as if it were the reply).
            Some(t) if (t.is_object() || t.is_array()) && !gives_shape(t) => json!(format!(
                "unknown: the documented example reply carries no usable shape ({}); infer the success \
                 reply's shape from the description, the parameters and the recorded examples",
                t
            )),
            Some(t) if given.template_for_other_call.is_some() => json!({
                "example_only": given.template_for_other_call,
                "template": t,
            }),
            other => json!(other),
        };
        let api_doc = json!({
            "tool_name": doc.tool_name,
            "tool_description": tool_description,
            "category": doc.category_name,
            "api_name": doc.api_name,
            "api_description": doc.description(),
            "required_parameters": doc.required(),
            "optional_parameters": doc.optional(),
            "template_response": shape,
        });
        let prompts = Prompts::load().map_err(|e| e.to_string())?;
        let system = prompts
            .render(PromptName::ToolSimulatorSystem, &[])
            .map_err(|e| e.to_string())?;
        let pretty = serde_json::to_string_pretty(&api_doc).unwrap_or_default();
        let arguments = Value::Object(given.args.clone()).to_string();
        let user = prompts
            .render(
                PromptName::ToolSimulatorUser,
                &[
                    ("api_doc", &pretty),
                    ("examples", &super::examples::render(given.recorded)),
                    ("facts", &super::world::entities::render(given.facts)),
                    ("arguments", &arguments),
                ],
            )
            .map_err(|e| e.to_string())?;
        let mut request = CompletionRequest::new(
            sum2act_core::llm::purpose::Purpose::ToolSimulator,
            vec![Message::system(system), Message::user(user)],
        )
        .with_max_tokens(1024)
        .with_temperature(0.0);
        // Constrained to the template's shape when it has one (json_schema for endpoints, a grammar
        // for the embedded model), and checked again: a reply that ignores the template is retried.
        let enforced = given
            .template
            .filter(|_| given.template_for_other_call.is_none());
        request.response_format = match reply_schema(enforced) {
            Some(schema) => ResponseFormat::JsonSchema {
                name: "tool_reply".into(),
                schema,
            },
            None => ResponseFormat::JsonObject,
        };
        Ok(request)
    }
}

/// The model's text → a reply: fences stripped, a JSON object with a `response` field.
pub fn parse_reply(text: &str) -> Result<ToolReply, String> {
    let t = text.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .map_or(t, |s| s.trim_end().strip_suffix("```").unwrap_or(s))
        .trim();
    let value: Value =
        serde_json::from_str(t).map_err(|e| format!("the simulator's reply is not JSON: {e}"))?;
    let Value::Object(mut obj) = value else {
        return Err("the simulator's reply is not a JSON object".to_string());
    };
    let response = obj
        .remove("response")
        .ok_or_else(|| "the simulator's reply has no `response`".to_string())?;
    let error = match obj.remove("error") {
        Some(Value::String(s)) => s,
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    Ok(ToolReply::new(error, response, Some(ReplySource::Llm)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fenced_replies() {
        let r = parse_reply("```json\n{\"error\": \"\", \"response\": {\"a\": 1}}\n```").unwrap();
        assert_eq!(r.response, json!({"a": 1}));
        assert_eq!(r.source, Some(ReplySource::Llm));
        assert!(parse_reply("{\"error\": \"\"}").is_err());
        assert!(parse_reply("sure!").is_err());
    }

    #[test]
    fn a_template_recorded_for_another_kind_of_result_is_shown_not_enforced() {
        // Simulator requests 107/113: a player page asked, the template a club page.
        let llm = Arc::new(sum2act_core::llm::scripted::ScriptedLlm::new(|_, _| {
            Ok(sum2act_core::llm::scripted::reply(
                r#"{"error": "", "response": {"name": "Lionel Messi"}}"#,
            ))
        }));
        let sim = LlmSimulator::new(llm.clone());
        let doc = sum2act_core::toolbench::fixture::api_doc("Data", "TheClique", "details", vec![]);
        let template = json!({"name": "str", "squad_size": "str", "players": [{"name": "str"}]});
        let args = Map::new();
        let given = |other: Option<String>| Given {
            template: Some(&template),
            template_for_other_call: other,
            recorded: &[],
            args: &args,
            facts: &[],
        };
        let enforced = sim
            .request("", &doc, &given(None))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            enforced.response_format,
            ResponseFormat::JsonSchema { .. }
        ));
        let why = Some("recorded for type_s = \"verein\"".to_string());
        let shown = sim
            .request("", &doc, &given(why.clone()))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(shown.response_format, ResponseFormat::JsonObject));
        let user = shown
            .messages
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        assert!(
            user.contains("example_only") && user.contains("squad_size"),
            "{user}"
        );
        // A reply without the template's fields is accepted.
        let rt = tokio::runtime::Builder::new_current_thread().build();
        let reply = rt
            .map(|rt| rt.block_on(sim.simulate("", &doc, &given(why))))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            reply.map(|r| r.response),
            Ok(json!({"name": "Lionel Messi"}))
        );
    }

    #[test]
    fn placeholder_and_null_templates_are_shape_unknown_and_maps_pin_no_keys() {
        // Simulator requests 593, 686, 903 and 832 of the strong-model run.
        let llm = Arc::new(sum2act_core::llm::scripted::ScriptedLlm::new(|_, _| {
            Ok(sum2act_core::llm::scripted::reply(
                r#"{"error": "", "response": {}}"#,
            ))
        }));
        let sim = LlmSimulator::new(llm);
        let doc = sum2act_core::toolbench::fixture::api_doc("Data", "T", "a", vec![]);
        let args = Map::new();
        let request = |template: &Value| {
            let given = Given {
                template: Some(template),
                template_for_other_call: None,
                recorded: &[],
                args: &args,
                facts: &[],
            };
            sim.request("", &doc, &given)
                .unwrap_or_else(|e| panic!("{e}"))
        };
        for t in [
            json!({"description": "str"}),
            json!({"user": "NoneType"}),
            json!({"results": ["list of NoneType with length 15"]}),
        ] {
            let r = request(&t);
            let user = r
                .messages
                .last()
                .map(|m| m.content.clone())
                .unwrap_or_default();
            assert!(
                user.contains("\"template_response\": \"unknown: "),
                "{user}"
            );
            assert!(
                matches!(r.response_format, ResponseFormat::JsonObject),
                "{t}"
            );
        }
        let fx = json!({"base": "str", "rates": {"EUR": "float", "GBP": "float", "JPY": "float"}});
        let ResponseFormat::JsonSchema { schema, .. } = request(&fx).response_format else {
            panic!("the fx template gives a schema");
        };
        let usd = json!({"error": "", "response": {"base": "EUR", "rates": {"USD": 1.08}}});
        assert_eq!(
            sum2act_core::llm::json_check::problems(&usd, &schema),
            Vec::<String>::new()
        );
    }
}
