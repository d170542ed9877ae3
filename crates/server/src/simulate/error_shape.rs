//! Templates and recorded replies that are error replies. ToolBench recorded each template from one
//! real call, and many of those calls failed: 261 of the shared data's 1,509 dict templates are just
//! `{"message": "str"}` (RapidAPI's "You are not subscribed", "Not Found"), others are
//! `{"error", "stack", "results": null}`, `{"statusCode", "message"}`, `{"messages", "info"}` (the gateway's
//! timeout), `{"type", "title", "status"}` (RFC 7807 problem details), `{"detail": [{"loc", "msg"}]}`
//! (FastAPI's validation error) or `{"err", "msg"}`. Such a template says nothing about the success
//! reply's shape: the simulators treat it as "shape unknown" (the schema simulator infers the shape, the
//! LLM simulator is told to infer it from the documentation and the successful examples), never as the
//! shape to copy. The same rules read recorded replies (with real values), so that only successful ones
//! are shown to the LLM simulator as examples.
//!
//! The rule: a reply is an error when it names an error (an error key with a value, a message key, a
//! `success: false`, an HTTP error status, or the problem-details trio `type`/`title`/`status`) and
//! carries nothing else (every other top-level field is a status or request field, null or empty).

use serde_json::Value;

use sum2act_core::toolbench::naming::squash;

/// Keys that name an error.
const ERROR_KEYS: &[&str] = &[
    "error",
    "errors",
    "err",
    "errno",
    "errcode",
    "errorcode",
    "errormessage",
    "errormsg",
    "errordetail",
    "errordetails",
    "exctype",
    "exception",
    "fault",
    "stack",
    "stacktrace",
];

/// Keys that carry an error's text.
const MESSAGE_KEYS: &[&str] = &[
    "message",
    "messages",
    "msg",
    "detail",
    "details",
    "statusmessage",
    "statusreasonphrase",
    "mensaje",
];

/// Keys an error reply carries besides its error: status, codes, request and trace ids, how long the
/// server took, the failed request's echo.
const CONTEXT_KEYS: &[&str] = &[
    "status",
    "stat",
    "statuscode",
    "statusvalue",
    "statustxt",
    "code",
    "cod",
    "success",
    "ok",
    "type",
    "title",
    "instance",
    "info",
    "meta",
    "metadata",
    "timestamp",
    "time",
    "generatedin",
    "took",
    "elapsed",
    "executiontime",
    "processingtime",
    "responsetime",
    "path",
    "name",
    "config",
    "request",
    "requestid",
    "traceid",
    "extensions",
    "instrumentation",
    "warning",
    "warnings",
    "data",
    "results",
    "result",
];

/// What a template says about an API's replies (counted by `data stats` and the fidelity bench).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TemplateClass {
    /// The success reply's shape.
    WithData,
    /// A recorded error reply: the shape is unknown.
    ErrorReply,
    /// Status fields, empty lists or nulls only: the shape is unknown.
    StatusOnly,
    /// One generic field and nothing else (`{"description": "str"}`, TEXTKING's job status): the
    /// recorded call's message, not the API's data; the shape is unknown.
    Placeholder,
    /// No template.
    Missing,
}

impl TemplateClass {
    pub fn of(template: Option<&Value>) -> Self {
        match template {
            None => TemplateClass::Missing,
            Some(t) if template_is_error(t) => TemplateClass::ErrorReply,
            Some(t) if template_is_placeholder(t) => TemplateClass::Placeholder,
            Some(t) if super::carries_data(t) => TemplateClass::WithData,
            Some(_) => TemplateClass::StatusOnly,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            TemplateClass::WithData => "with data",
            TemplateClass::ErrorReply => "error reply",
            TemplateClass::StatusOnly => "status-only or empty",
            TemplateClass::Placeholder => "one generic field",
            TemplateClass::Missing => "none",
        }
    }
}

/// Whether a template (ToolBench's notation: `"str"`, `"NoneType"`, `_list_length`) is an error reply.
pub fn template_is_error(template: &Value) -> bool {
    is_error(template, true)
}

/// Field names that say nothing about what they hold: a template of only one of them, holding a
/// scalar, is a message the recorded call got, not the API's data.
const GENERIC_KEYS: &[&str] = &[
    "description",
    "response",
    "info",
    "data",
    "body",
    "content",
    "output",
];

/// Whether a template is one generic field holding a scalar (`{"description": "str"}`).
pub fn template_is_placeholder(template: &Value) -> bool {
    let Some(m) = template.as_object() else {
        return false;
    };
    let mut fields = m.iter().filter(|(k, _)| k.as_str() != "_list_length");
    match (fields.next(), fields.next()) {
        (Some((k, Value::String(_))), None) => GENERIC_KEYS.contains(&squash(k).as_str()),
        _ => false,
    }
}

/// Whether a recorded reply (real values; JSON or Python text already decoded) is an error reply.
/// Short texts that say they failed (`Forbidden`, `An API key is required ...`) count too.
pub fn reply_is_error(reply: &Value) -> bool {
    match reply {
        Value::String(s) => error_text(s),
        other => is_error(other, false),
    }
}

fn is_error(v: &Value, template: bool) -> bool {
    let Some(m) = v.as_object() else {
        return false;
    };
    let keys: Vec<(String, &Value)> = m
        .iter()
        .filter(|(k, _)| k.as_str() != "_list_length")
        .map(|(k, v)| (squash(k), v))
        .collect();
    if keys.is_empty() {
        return false;
    }
    let has = |set: &[&str]| {
        keys.iter()
            .any(|(k, v)| set.contains(&k.as_str()) && !empty(v, template))
    };
    // A template's message is a type name; a real one must say it failed (`{"message": "Success"}` is not
    // an error).
    let says_failed = keys.iter().any(|(k, v)| {
        MESSAGE_KEYS.contains(&k.as_str())
            && match v {
                Value::String(s) => template || error_text(s),
                other => !empty(other, template),
            }
    });
    let http_error_key = keys
        .iter()
        .any(|(k, _)| k.parse::<u16>().is_ok_and(|n| (400..600).contains(&n)));
    let failed = keys.iter().any(|(k, v)| match k.as_str() {
        "success" | "ok" => v.as_bool() == Some(false),
        // Flickr-style APIs (Vimeo's old one): `"stat": "fail"`.
        "stat" => v.as_str().is_some_and(|s| s.eq_ignore_ascii_case("fail")),
        "status" | "statuscode" | "code" | "cod" => http_error_status(v),
        _ => false,
    });
    let problem = ["type", "title", "status"]
        .iter()
        .all(|want| keys.iter().any(|(k, _)| k == want));
    let names_error = has(ERROR_KEYS) || says_failed || http_error_key || failed || problem;
    let other_data = keys.iter().any(|(k, v)| {
        let known = ERROR_KEYS.contains(&k.as_str())
            || MESSAGE_KEYS.contains(&k.as_str())
            || CONTEXT_KEYS.contains(&k.as_str())
            || k.chars().all(|c| c.is_ascii_digit());
        let data_context = matches!(k.as_str(), "data" | "results" | "result");
        (!known || data_context) && !empty(v, template)
    });
    names_error && !other_data
}

/// Null, an empty container or text, or a template's `NoneType` / empty list.
fn empty(v: &Value, template: bool) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => {
            s.trim().is_empty()
                || (template && matches!(s.as_str(), "NoneType" | "empty list" | "list" | "dict"))
        }
        Value::Array(a) => a.is_empty() || (template && a.iter().all(|x| empty(x, true))),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn http_error_status(v: &Value) -> bool {
    let n = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    n.is_some_and(|n| (400..600).contains(&n))
}

/// A short text reply that says the call failed.
fn error_text(s: &str) -> bool {
    let t = s.trim().to_lowercase();
    if t.is_empty() || t.len() > 300 || t.starts_with('{') || t.starts_with('[') {
        return false;
    }
    [
        "forbidden",
        "unauthorized",
        "not found",
        "api key",
        "not subscribed",
        "disabled for your subscription",
        "does not exist",
        "doesn't exist",
        "doesn't exists",
        "bad request",
        "internal server error",
        "rate limit",
        "timed out",
        "invalid",
        "error",
        "must be",
        "unknown",
        "unrecognized",
        "exceeds",
        "missing",
        "required",
        "not allowed",
        "failed",
        "no such",
    ]
    .iter()
    .any(|w| t.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_templates_of_the_issue_and_the_data_are_errors() {
        for t in [
            json!({"message": "str"}),
            json!({"error": "str", "stack": "str", "results": "NoneType"}),
            json!({"statusCode": "int", "message": "str"}),
            json!({"messages": "str", "info": "str"}),
            json!({"type": "str", "title": "str", "status": "int"}),
            json!({"detail": [{"loc": ["list of str with length 2"], "msg": "str", "type": "str", "_list_length": 1}]}),
            json!({"err": "str", "msg": "str"}),
            json!({"code": "int", "data": "NoneType", "msg": "str", "time": "int", "requestId": "str"}),
            json!({"404": "str"}),
            json!({"cod": "str", "message": "str"}),
            // Vimeo's GetRelatedPeople (simulator requests 426, 458, 514): Vimeo's old API error.
            json!({"generated_in": "str", "stat": "str", "err": {"code": "str", "expl": "str", "msg": "str"}}),
        ] {
            assert!(template_is_error(&t), "{t}");
        }
    }

    #[test]
    fn templates_with_data_or_without_an_error_are_not() {
        for t in [
            json!({"city": "str", "temp": "float"}),
            json!({"message": "str", "link": "str"}),
            json!({"data": [{"name": "str"}], "message": "str", "status": "int"}),
            json!({"title": "str", "err": "NoneType", "count": "int", "data": [{"id": "str"}]}),
            json!({"status": "str"}),
            json!({}),
            json!({"result": {"num_results": "int"}, "errors": "empty list"}),
        ] {
            assert!(!template_is_error(&t), "{t}");
        }
    }

    #[test]
    fn one_generic_field_is_a_placeholder() {
        // Simulator requests 593 and 693: TEXTKING's job status template.
        assert!(template_is_placeholder(&json!({"description": "str"})));
        assert!(template_is_placeholder(
            &json!({"Response": "str", "_list_length": 1})
        ));
        assert!(!template_is_placeholder(&json!({"word": "str"})));
        assert!(!template_is_placeholder(
            &json!({"description": "str", "id": "int"})
        ));
        assert!(!template_is_placeholder(&json!({"data": [{"id": "int"}]})));
        assert_eq!(
            TemplateClass::of(Some(&json!({"description": "str"}))),
            TemplateClass::Placeholder
        );
    }

    #[test]
    fn recorded_error_replies_are_read_with_their_values() {
        for r in [
            json!({"message": "Not Found"}),
            json!({"success": false, "message": "Tracking information not found"}),
            json!({"generated_in": "0.0046", "stat": "fail", "err": {"code": "1", "expl": "x", "msg": "Method not found"}}),
            json!({"type": "https://tools.ietf.org/html/rfc7231#section-6.5.1", "title": "Bad Request", "status": 400, "traceId": "|b1"}),
            json!("Forbidden"),
            json!({"message": "genre must be an integer: Thriller"}),
            json!("An API key is required to access this data and no key was provided"),
        ] {
            assert!(reply_is_error(&r), "{r}");
        }
        for r in [
            json!({"result": [], "hasMore": false, "nextCursor": ""}),
            json!({"on_tour": "no"}),
            json!({"meta": {"code": 200, "type": "Success", "message": "Success"}, "data": [{"name": "Yun Express"}]}),
            json!("<b><i>party</i></b>,<b><i>ideas</i></b>"),
            json!({"status": "ok", "message": "Success", "data": {"id": 1}}),
            json!({"status": "ok", "message": "Message sent"}),
        ] {
            assert!(!reply_is_error(&r), "{r}");
        }
    }
}
