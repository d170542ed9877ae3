//! What each API the agent called is, as it was offered to the agent: its description and parameters,
//! shown to the judge before the calls. Without them a judge cannot tell an honest "the screenshot tool
//! takes no URL" from a tool called without the URL its description asks for (issue 41). Taken from the
//! functions the answer file offered (`answer_generation.function`); none offered, no section.

use serde_json::Value;

use super::input::Answer;
use super::observations::Observed;
use sum2act_core::toolbench::FINISH;

/// Most characters of one API's entry: its description and parameters, cut with a visible marker.
pub const API_CHARS: usize = 400;
/// Most characters of the whole section's entries: the APIs past it are counted, not shown.
pub const SECTION_CHARS: usize = 4_000;
/// What ToolBench puts before every function's own description.
pub const DOC_PREFIX: &str = "The description of this function is:";
/// The heading of the section: what the entries are, so the rubric's rule about a tool's inputs can
/// point at them.
const HEADING: &str = "APIs called (each once, as offered to the assistant: what it does and the parameters it takes):";
/// Where an entry or the section was cut.
const CUT_MARK: &str = " […cut]";

/// The "APIs called" section for the calls in `observed`: each distinct API once, in the order first
/// called, ending in a blank line; empty when the answer file offers no functions or no API was called.
pub fn apis_called(answer: &Answer, observed: &[Observed]) -> String {
    let offered = offered(answer);
    if offered.is_empty() {
        return String::new();
    }
    let mut names: Vec<&str> = Vec::new();
    for o in observed
        .iter()
        .filter(|o| o.is_result() && o.name != FINISH)
    {
        if !names.contains(&o.name.as_str()) {
            names.push(&o.name);
        }
    }
    if names.is_empty() {
        return String::new();
    }
    let entries = names.iter().map(|name| match find(&offered, name) {
        Some(f) => entry(name, f),
        None => format!("- {name}: not among the APIs offered to the assistant"),
    });
    section(entries.collect())
}

/// The functions the answer file offered, `Finish` left out (it is no API).
fn offered(answer: &Answer) -> Vec<&Value> {
    answer
        .converted
        .available_tools
        .iter()
        .map(|t| t.get("function").unwrap_or(t))
        .filter(|f| f["name"].as_str().is_some_and(|n| n != FINISH))
        .collect()
}

/// The offered function called `name` (exactly, else ignoring case: some harnesses change it).
fn find<'a>(offered: &[&'a Value], name: &str) -> Option<&'a Value> {
    let named = |exact: bool| {
        offered.iter().copied().find(|f| {
            let n = f["name"].as_str().unwrap_or("");
            if exact {
                n == name
            } else {
                n.eq_ignore_ascii_case(name)
            }
        })
    };
    named(true).or_else(|| named(false))
}

/// One API's line: `- name: description Parameters: p (type, required): what it is; …`, cut at
/// [`API_CHARS`].
fn entry(name: &str, function: &Value) -> String {
    let description = own_description(function["description"].as_str().unwrap_or(""));
    let mut line = format!("- {name}: ");
    line.push_str(if description.is_empty() {
        "(no description)"
    } else {
        description
    });
    let parameters = parameters(&function["parameters"]);
    line.push_str(&if parameters.is_empty() {
        " Parameters: none.".to_string()
    } else {
        format!(" Parameters: {}.", parameters.join("; "))
    });
    cut_marked(&line, API_CHARS)
}

/// A function's own description, without ToolBench's boilerplate ("This is the subfunction for tool
/// …") and the quotes around it.
pub fn own_description(doc: &str) -> &str {
    let own = doc
        .split_once(DOC_PREFIX)
        .map_or(doc, |(_, own)| own)
        .trim();
    let own = own.strip_prefix('"').unwrap_or(own);
    own.strip_suffix('"').unwrap_or(own).trim()
}

/// `name (type, required): description` for each property, in the schema's order.
fn parameters(schema: &Value) -> Vec<String> {
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties
        .iter()
        .map(|(name, spec)| {
            let need = if required.contains(&name.as_str()) {
                "required"
            } else {
                "optional"
            };
            let kind = spec["type"].as_str().filter(|t| !t.trim().is_empty());
            let what = kind.map_or(need.to_string(), |k| format!("{k}, {need}"));
            match spec["description"].as_str().map(str::trim) {
                Some(d) if !d.is_empty() => format!("{name} ({what}): {d}"),
                _ => format!("{name} ({what})"),
            }
        })
        .collect()
}

/// The heading and as many whole entries as fit in [`SECTION_CHARS`]; the rest are counted.
fn section(entries: Vec<String>) -> String {
    let mut out = format!("{HEADING}\n");
    let mut used = 0;
    for (i, e) in entries.iter().enumerate() {
        let len = e.chars().count() + 1;
        if used + len > SECTION_CHARS {
            let left = entries.len() - i;
            out.push_str(&format!("- […{left} more APIs not shown]\n"));
            break;
        }
        used += len;
        out.push_str(e);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// `s` cut to at most `n` characters, the marker included, when longer.
fn cut_marked(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let keep = n.saturating_sub(CUT_MARK.chars().count());
    let head: String = s.chars().take(keep).collect();
    format!("{}{CUT_MARK}", head.trim_end())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::observations::fixture::recorded;
    use crate::observations::observations;

    /// A screenshot API as ToolBench offers it: boilerplate, a URL it requires and optional sizes.
    fn screenshot_doc() -> Value {
        json!({
            "name": "screenshot_for_snap",
            "description": "This is the subfunction for tool \"snap\", you can use this tool.The description of this function is: \"Takes a screenshot of a web page at the given size.\"",
            "parameters": {"type": "object", "properties": {
                "url": {"type": "string", "description": "Address of the page to capture"},
                "width": {"type": "integer", "description": "Width in pixels"},
                "height": {"type": "integer"}},
                "required": ["url"], "optional": ["width", "height"]}
        })
    }

    /// An answer that called the screenshot API with no arguments, offered `tools`.
    fn called(tools: Vec<Value>) -> (Answer, Vec<Observed>) {
        let mut a = recorded(
            "Screenshot example.com at 800x600.",
            "screenshot_for_snap",
            json!({"image": "google.png"}),
            "The screenshot tool takes no URL or size.",
            1024,
        );
        a.converted.available_tools = tools;
        let observed = observations(&a, 16_000);
        (a, observed)
    }

    #[test]
    fn each_called_api_is_shown_once_with_its_description_and_parameters() {
        let (a, mut observed) = called(vec![screenshot_doc(), json!({"name": "Finish"})]);
        observed.push(observed[0].clone());
        let text = apis_called(&a, &observed);
        assert!(text.starts_with("APIs called ("), "{text}");
        let line = "- screenshot_for_snap: Takes a screenshot of a web page at the given size. \
                    Parameters: url (string, required): Address of the page to capture; \
                    width (integer, optional): Width in pixels; height (integer, optional).";
        assert!(text.contains(line), "{text}");
        assert_eq!(text.matches("screenshot_for_snap").count(), 1, "{text}");
        assert!(
            !text.contains("subfunction") && !text.contains("Finish"),
            "{text}"
        );
        assert!(
            text.ends_with(".\n\n"),
            "a blank line before the calls: {text:?}"
        );
    }

    #[test]
    fn the_section_is_omitted_without_offered_functions_or_calls() {
        let (a, observed) = called(Vec::new());
        assert_eq!(apis_called(&a, &observed), "");
        let (a, _) = called(vec![json!({"name": "Finish"})]);
        assert_eq!(apis_called(&a, &observed), "", "Finish is no API");
        let (a, _) = called(vec![screenshot_doc()]);
        assert_eq!(apis_called(&a, &[]), "", "no API called");
    }

    #[test]
    fn an_api_not_offered_says_so_and_the_openai_form_is_read() {
        let (mut a, observed) = called(vec![
            json!({"type": "function", "function": screenshot_doc()}),
        ]);
        assert!(apis_called(&a, &observed).contains("url (string, required)"));
        a.converted.available_tools = vec![json!({"name": "other_for_x"})];
        assert!(
            apis_called(&a, &observed)
                .contains("- screenshot_for_snap: not among the APIs offered to the assistant")
        );
    }

    #[test]
    fn entries_and_the_section_are_capped_with_a_visible_marker() {
        let mut long = screenshot_doc();
        long["description"] = json!("x".repeat(2_000));
        let line = entry("screenshot_for_snap", &long);
        assert_eq!(line.chars().count(), API_CHARS, "{line}");
        assert!(line.ends_with(CUT_MARK), "{line}");
        let entries: Vec<String> = (0..20).map(|_| line.clone()).collect();
        let text = section(entries);
        assert!(
            text.chars().count() <= SECTION_CHARS + 200,
            "{}",
            text.len()
        );
        assert_eq!(text.matches(CUT_MARK).count(), 9, "nine whole entries fit");
        assert!(text.contains("- […11 more APIs not shown]"), "{text}");
    }
}
