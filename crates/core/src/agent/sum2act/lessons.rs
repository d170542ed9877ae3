//! Failure history that teaches: a parameter error on one API is generalised to the tool's sibling APIs
//! that share the problem (from their schemas), so the router does not try the same arguments on each.

use serde_json::Value;

use crate::toolbench::Function;

/// Most sibling APIs named in one lesson.
const MAX_NAMED: usize = 4;

/// What a rejected call teaches about its tool, when the error is about parameters and siblings share
/// the problem: "tool weather's APIs take no parameters" or "'city' is not a parameter of …".
pub fn parameter_lesson(
    action: &str,
    arguments: &str,
    error: &str,
    functions: &[Function],
) -> Option<String> {
    let lower = error.to_lowercase();
    let no_params = lower.contains("takes no parameters");
    if !no_params && !lower.contains("unexpected parameter") {
        return None;
    }
    let api = functions.iter().find(|f| f.name == action)?;
    let siblings: Vec<&Function> = functions
        .iter()
        .filter(|f| f.tool == api.tool && f.name != api.name)
        .collect();
    let sent: Vec<String> = match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    };
    let rejected: Vec<&String> = sent.iter().filter(|k| !api.params.contains(k)).collect();
    if rejected.is_empty() {
        return None;
    }
    let sharing: Vec<&str> = siblings
        .iter()
        .filter(|f| rejected.iter().all(|k| !f.params.contains(k)))
        .map(|f| f.name.as_str())
        .collect();
    if sharing.is_empty() {
        return None;
    }
    let all_bare = api.params.is_empty() && siblings.iter().all(|f| f.params.is_empty());
    if all_bare {
        return Some(format!(
            "tool {}'s APIs take no parameters: call them with {{}}",
            api.tool
        ));
    }
    let names = rejected
        .iter()
        .map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut apis: Vec<&str> = vec![api.name.as_str()];
    apis.extend(sharing.iter().take(MAX_NAMED - 1));
    let more = sharing.len().saturating_sub(MAX_NAMED - 1);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(format!(
        "{names} is not a parameter of tool {}'s APIs {}{tail}",
        api.tool,
        apis.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolbench::fixture::{api_doc, string_params};
    use serde_json::json;

    fn function(api: &str, params: &[&str]) -> Function {
        let required = string_params(params, &json!(""));
        Function::from_doc(&api_doc("Data", "Stats", api, required), "stats")
    }

    #[test]
    fn no_parameter_tool_is_generalised() {
        let fs = vec![function("totals", &[]), function("leaders", &[])];
        let lesson = parameter_lesson(
            &fs[0].name,
            r#"{"team":"x"}"#,
            "unexpected parameter(s): 'team' (this API takes no parameters)",
            &fs,
        );
        assert_eq!(
            lesson.as_deref(),
            Some("tool stats's APIs take no parameters: call them with {}")
        );
    }

    #[test]
    fn only_siblings_without_the_parameter_are_named() {
        let fs = vec![
            function("totals", &["season"]),
            function("leaders", &["season"]),
            function("team", &["team"]),
        ];
        let lesson = parameter_lesson(
            &fs[0].name,
            r#"{"team":"x"}"#,
            "unexpected parameter(s): 'team' (accepted: season)",
            &fs,
        )
        .unwrap_or_default();
        assert!(lesson.contains(&fs[1].name), "{lesson}");
        assert!(!lesson.contains(&fs[2].name), "{lesson}");
        // Not a parameter error, or an API without siblings sharing it: nothing to generalise.
        assert_eq!(
            parameter_lesson(&fs[0].name, r#"{"team":"x"}"#, "timeout", &fs),
            None
        );
        assert_eq!(
            parameter_lesson(
                &fs[0].name,
                "{}",
                "unexpected parameter(s): 'team'",
                &fs[..1]
            ),
            None
        );
    }
}
