//! The rubric of `eval/README.md` and the evidence judge that follows it: the judge prompts state its
//! rules word for word, and the rubric's cases (a reformatted value from the tail of a long
//! observation, a negative result, an honest "could not be obtained", a part no call concerned, an
//! answer whose values come from nowhere) get the verdicts the rubric gives, against a scripted judge
//! model that says yes to every part question and records what it was shown.

use std::sync::Arc;

use serde_json::json;

use super::Label;
use super::cache::JudgeCache;
use super::evidence::check_answer;
use super::evidence_judge::judge_answer;
use super::input::Answer;
use super::judge::{Judge, JudgeOptions};
use super::observations::fixture::recorded;
use super::rules::decide;
use sum2act_core::llm::scripted::{ScriptedLlm, reply};
use sum2act_core::prompts::{PromptName, Prompts};

const RUBRIC_PAGE: &str = include_str!("../../../eval/README.md");
const JUDGE_PROMPTS: [PromptName; 4] = [
    PromptName::JudgePart,
    PromptName::JudgeAnswer,
    PromptName::JudgeTrajectory,
    PromptName::JudgePrefer,
];

#[test]
fn judge_prompts_state_the_rubric_word_for_word() {
    let rubric: Vec<&str> = RUBRIC_PAGE
        .lines()
        .filter(|l| l.starts_with("- "))
        .collect();
    let prompts = Prompts::embedded();
    for name in JUDGE_PROMPTS {
        let template = prompts.template(name).unwrap();
        let rules: Vec<&str> = template.lines().filter(|l| l.starts_with("- ")).collect();
        assert!(rules.len() >= 4, "{name} states the rubric's rules");
        for rule in rules {
            assert!(
                rubric.contains(&rule),
                "{name}: rule not in eval/README.md word for word: {rule}"
            );
        }
    }
    // The part question carries every rule about parts.
    let part = prompts.template(PromptName::JudgePart).unwrap();
    let part_rules = RUBRIC_PAGE
        .lines()
        .skip_while(|l| !l.starts_with("- A part is delivered when"))
        .take_while(|l| l.starts_with("- "));
    for rule in part_rules {
        assert!(part.contains(rule), "judge_part lacks: {rule}");
    }
    for contradiction in ["admits failure", "says it could not get the information"] {
        for name in JUDGE_PROMPTS {
            let t = prompts.template(name).unwrap();
            assert!(!t.contains(contradiction), "{name}: {contradiction}");
        }
    }
}

/// An answer with one call whose observation the answer file keeps cut at 1,024 characters.
fn answer(query: &str, name: &str, response: serde_json::Value, final_answer: &str) -> Answer {
    recorded(query, name, response, final_answer, 1024)
}

/// The evidence judge's single vote on `a` (rules first), with a judge model that says every part
/// is delivered and keeps the prompts it was sent.
async fn verdict(a: &Answer) -> (Label, String, Vec<String>) {
    let evidence = check_answer(a);
    if let Some(hit) = decide(a, &evidence) {
        return (Label::Unsolved, hit.rule.as_str().to_string(), Vec::new());
    }
    let llm = Arc::new(ScriptedLlm::new(|req, _| {
        let prompt = &req.messages[0].content;
        Ok(reply(if prompt.contains("List the separate things") {
            r#"{"parts": ["the release date"]}"#
        } else {
            r#"{"covered": "yes", "reason": "stated"}"#
        }))
    }));
    let options = JudgeOptions::default();
    let judge = Judge::new(
        llm.clone(),
        Prompts::embedded(),
        JudgeCache::memory(),
        options,
    );
    let judged = judge_answer(&judge, a, &evidence, 1).await.unwrap();
    let prompts = llm
        .requests()
        .iter()
        .map(|r| r.messages[0].content.clone())
        .collect();
    let vote = &judged.votes[0];
    (vote.label, vote.reason.clone(), prompts)
}

#[tokio::test]
async fn a_reformatted_value_from_a_long_observations_tail_is_delivered() {
    let filler: Vec<serde_json::Value> = (0..40)
        .map(|i| json!({"id": i, "note": "an unrelated entry"}))
        .collect();
    let response = json!({"items": filler, "release_date": "2008-11-07"});
    let a = answer(
        "When was the album released?",
        "album_for_music",
        response,
        "The album was released on 7 Nov 2008.",
    );
    let (label, reason, prompts) = verdict(&a).await;
    assert_eq!(label, Label::Solved, "{reason}");
    let part = prompts
        .iter()
        .find(|p| p.contains("Part to check:"))
        .unwrap();
    assert!(
        part.contains(r#""release_date": "2008-11-07""#),
        "the judge sees the whole observation, not the 1,024-character cut"
    );
    assert!(part.contains("(check each; it may be invented): none"));
}

#[tokio::test]
async fn a_negative_result_and_an_honest_not_available_are_delivered() {
    let q = "Get the WhatsApp profile picture of +34 605 11 22 33.";
    let negative = answer(
        q,
        "profile_picture_for_whatsapp",
        json!({"status": "not registered"}),
        "+34 605 11 22 33 is not registered on WhatsApp, so it has no profile picture.",
    );
    let (label, reason, _) = verdict(&negative).await;
    assert_eq!(label, Label::Solved, "{reason}");
    let unusable = answer(
        "What is the status of flight TP1350 today?",
        "flight_status_for_flights",
        json!({"message": "service temporarily unavailable"}),
        "The flight status API only answered that its service is unavailable, so the status of flight TP1350 could not be obtained.",
    );
    let (label, reason, _) = verdict(&unusable).await;
    assert_eq!(label, Label::Solved, "{reason}");
}

#[tokio::test]
async fn parts_no_call_concerned_and_values_from_nowhere_are_not_delivered() {
    let unasked = answer(
        "Give me the weather in Lisbon and the status of flight TP1350.",
        "current_weather_for_skycast",
        json!({"city": "Lisbon", "temp_c": 21.4}),
        "It is 21.4 °C in Lisbon. Flight TP1350 is on time.",
    );
    let mut split = unasked.clone();
    split.converted.query = "Give me the status of flight TP1350.".into();
    let (label, reason, prompts) = verdict(&split).await;
    assert_eq!(label, Label::Unsolved, "{reason}");
    assert!(reason.contains("not delivered"), "{reason}");
    assert!(
        prompts.iter().all(|p| !p.contains("Part to check:")),
        "no call concerned the part: decided without a question"
    );
    let invented = answer(
        "What is the status of flight TP1350?",
        "flight_status_for_flights",
        json!({"message": "no data"}),
        "Flight TP1350 departs at 14:35 from gate B12, terminal 1.",
    );
    let (label, reason, _) = verdict(&invented).await;
    assert_eq!(label, Label::Unsolved, "{reason}");
    assert!(reason.contains("found nowhere"), "{reason}");
}

/// Issue 41's screenshot case: the agent called the tool with no arguments, got a default capture and
/// said the tool takes no URL. The part question shows what the tool takes, and the rule about it.
#[tokio::test]
async fn the_part_question_shows_the_called_apis_description_and_parameters() {
    let mut a = answer(
        "Take a screenshot of example.com at 800x600.",
        "screenshot_for_snap",
        json!({"image": "https://cdn.snap/google.com.png"}),
        "Here is the screenshot: https://cdn.snap/google.com.png (the screenshot tool takes no URL or size).",
    );
    a.converted.available_tools = vec![
        json!({"name": "screenshot_for_snap", "description": "Takes a screenshot of a web page.",
               "parameters": {"type": "object", "required": ["url"], "properties": {
                   "url": {"type": "string", "description": "Page to capture"},
                   "width": {"type": "integer", "description": "Width in pixels"}}}}),
        json!({"name": "Finish"}),
    ];
    let (_, _, prompts) = verdict(&a).await;
    let part = prompts
        .iter()
        .find(|p| p.contains("Part to check:"))
        .unwrap();
    let apis = part.find("APIs called (").expect("the section is shown");
    let calls = part.find("Every API call the assistant made").unwrap();
    assert!(apis < calls, "the APIs come before the calls");
    assert!(part.contains(
        "- screenshot_for_snap: Takes a screenshot of a web page. Parameters: url (string, required): \
         Page to capture; width (integer, optional): Width in pixels."
    ));
    assert!(part.contains("says a tool cannot take an input (a URL, a size)"));
}

/// Issue 41's list and "cut off" cases: from the answer alone the first look cannot tell an honest
/// short list from a lazy one, so its prompt sends both to the second look.
#[tokio::test]
async fn the_first_look_is_unsure_about_a_short_or_cut_off_list() {
    let llm = Arc::new(ScriptedLlm::new(|_, _| {
        Ok(reply(r#"{"reason": "r", "answer_status": "Unsure"}"#))
    }));
    let judge = Judge::new(
        llm.clone(),
        Prompts::embedded(),
        JudgeCache::memory(),
        JudgeOptions::default(),
    );
    judge
        .answer_status(
            "Give me 50 GUIDs.",
            "The tool returned only 20 GUIDs: …",
            0,
            "G1/1",
        )
        .await
        .unwrap();
    let sent = &llm.requests()[0].messages[0].content;
    assert!(sent.contains(
        "- Unsure: the answer says a part is incomplete, cut off, unavailable or could not be obtained, \
         or that a list holds fewer items than asked; only the tool results can show whether that is honest."
    ));
}
