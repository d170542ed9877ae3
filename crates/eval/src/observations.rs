//! What an answer can draw on, as the judge reads it: every tool call on the answer's path with its
//! full observation. ToolBench's answer files keep observations cut at 1,024 characters (what ReAct
//! and DFSDT see); our record keeps the whole reply (`sum2act.steps[].observation.response`), and the
//! judge reads that, each observation up to a cap and all of them within a prompt budget, so a claim
//! drawn from the tail of a long observation is not mistaken for an invention. Where the agent read
//! only the start of a reply, the judge is told how much, so an answer calling a part "cut off" or
//! "unavailable" that the whole reply holds is seen for what it is. Everything else the model was
//! shown is there too, labelled: DFSDT's earlier attempts (calls on abandoned branches, listed in its
//! re-expansion prompts) and a `Finish` the harness refused, with the reason.

use super::input::{Answer, RecordObservation, RecordStep, ToolStep, cut};
use serde_json::Value;
use sum2act_core::toolbench::FINISH;
use sum2act_core::tools::observation::{Ascii, reply_text, reply_text_as};

/// The suffix ToolBench's cut leaves on an observation (`rapidapi.py`).
const CUT_MARK: &str = "...";
/// Longest arguments shown per call.
const ARGUMENT_CHARS: usize = 500;

impl RecordObservation {
    /// The whole reply as `{"error": …, "response": …}`, spaced as the cut text is (Python's
    /// `json.dumps`: `", "` and `": "`), so the judge reads the head the agent read; non-ASCII kept as
    /// is, so names read as written. A reply longer than the record keeps is its recorded head.
    fn full_text(&self) -> String {
        match (&self.response, self.reply_chars) {
            (Value::String(head), Some(_)) => head.clone(),
            _ => reply_text_as(&self.error, &self.response, Ascii::Keep),
        }
    }

    /// The whole reply's length, counted as the text the agent read is (non-ASCII escaped).
    fn whole_chars(&self) -> usize {
        self.reply_chars
            .unwrap_or_else(|| reply_text(&self.error, &self.response).chars().count())
    }

    /// `(read, whole)` characters when `shown`, the text the agent read, was cut.
    fn read_of(&self, shown: &str) -> Option<(usize, usize)> {
        let read = shown.strip_suffix(CUT_MARK)?.chars().count();
        let whole = self.whole_chars();
        (whole > read).then_some((read, whole))
    }
}

/// What an observed call was to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// A call on the answer's path.
    Path,
    /// A call on a branch the search abandoned, shown to the model as an earlier attempt (DFSDT).
    EarlierAttempt,
    /// A `Finish` the harness refused: `text` is the reason the model was given.
    RefusedAnswer,
}

/// One call the agent made or was shown, and what it returned.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// 1-based position among the path's tool steps (among the earlier attempts for those).
    pub step: usize,
    pub name: String,
    pub arguments: String,
    /// The observation, whole where our record has it, cut at the cap otherwise.
    pub text: String,
    /// Whether `text` is longer than what the answer file holds (restored from the record).
    pub restored: bool,
    /// `(read, whole)` characters when the agent read only the start of the reply.
    pub read: Option<(usize, usize)>,
    pub seen: Seen,
}

impl Observed {
    /// A tool's reply (not the harness's refusal of an answer): what an answer may draw on.
    pub fn is_result(&self) -> bool {
        self.seen != Seen::RefusedAnswer
    }
}

/// Every call of `answer` as the judge reads it: the earlier attempts the model was shown, then the
/// path's tool calls with a refused `Finish` where it was refused (the accepted one left out), each
/// observation whole where our record has it and at most `max_chars` characters.
pub fn observations(answer: &Answer, max_chars: usize) -> Vec<Observed> {
    let record = answer.record.as_ref();
    let recorded: &[RecordStep] = record.map_or(&[], |r| &r.steps);
    let attempts: &[RecordStep] = record.map_or(&[], |r| &r.attempts);
    let mut used = vec![false; recorded.len()];
    let mut out: Vec<Observed> = attempts.iter().enumerate().map(attempt).collect();
    for (i, step) in answer.tool_steps().into_iter().enumerate() {
        let observed = if step.name == FINISH {
            refused(step, recorded, &mut used)
        } else {
            Some(on_path(step, recorded, &mut used))
        };
        out.extend(observed.map(|o| Observed { step: i + 1, ..o }));
    }
    for o in &mut out {
        o.text = cut(&o.text, max_chars).into_owned();
    }
    out
}

/// An earlier attempt, whole from the record.
fn attempt((i, r): (usize, &RecordStep)) -> Observed {
    let whole = !r.observation.response.is_null();
    Observed {
        step: i + 1,
        name: r.action.clone(),
        arguments: r.arguments.clone(),
        text: if whole {
            r.observation.full_text()
        } else {
            r.observation.text.clone()
        },
        restored: whole,
        read: r.observation.read_of(&r.observation.text).filter(|_| whole),
        seen: Seen::EarlierAttempt,
    }
}

/// A tool call on the path: its reply restored from the record where the answer file's copy is cut.
fn on_path(step: ToolStep, recorded: &[RecordStep], used: &mut [bool]) -> Observed {
    let mut o = Observed {
        step: 0,
        text: step.response.clone(),
        name: step.name,
        arguments: step.arguments,
        restored: false,
        read: None,
        seen: Seen::Path,
    };
    if !step.response.ends_with(CUT_MARK) {
        return o;
    }
    let hit = recorded
        .iter()
        .enumerate()
        .position(|(j, r)| !used[j] && r.action == o.name && r.observation.text == step.response);
    if let Some(j) = hit {
        used[j] = true;
        // A record without the reply (null) has nothing more to show. (Lengths cannot decide: the
        // whole reply keeps accents the cut text escapes as `\u00df`.)
        let r = &recorded[j].observation;
        if !r.response.is_null() {
            o.text = r.full_text();
            o.restored = true;
            o.read = r.read_of(&step.response);
        }
    }
    o
}

/// A `Finish` on the path the harness refused (Sum2Act's gate, a malformed `Finish`), with the
/// reason the model was given: from our record, else from the answer file's observation.
fn refused(step: ToolStep, recorded: &[RecordStep], used: &mut [bool]) -> Option<Observed> {
    let hit = recorded
        .iter()
        .enumerate()
        .position(|(j, r)| !used[j] && r.action == FINISH && r.arguments == step.arguments);
    let reason = match hit {
        Some(j) => {
            used[j] = true;
            recorded[j].observation.error.clone()
        }
        None if step.response.contains("error") => step.response.clone(),
        None => String::new(),
    };
    (!reason.is_empty()).then_some(Observed {
        step: 0,
        name: step.name,
        arguments: step.arguments,
        text: reason,
        restored: false,
        read: None,
        seen: Seen::RefusedAnswer,
    })
}

/// The head line of one call as the judge reads it.
fn head(o: &Observed) -> String {
    let call = format!("{}({})", o.name, cut(&o.arguments, ARGUMENT_CHARS));
    let read = o.read.map_or(String::new(), |(read, whole)| {
        format!(
            " [the agent read the first {} of {} characters]",
            thousands(read),
            thousands(whole)
        )
    });
    match o.seen {
        Seen::Path => format!("step {}: {call}{read}", o.step),
        Seen::EarlierAttempt => format!(
            "earlier attempt {} (an abandoned branch, shown to the agent): {call}{read}",
            o.step
        ),
        Seen::RefusedAnswer => format!(
            "step {}: {call} [answer refused by the harness; the agent was told:]",
            o.step
        ),
    }
}

/// `5210` → `5,210`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The calls and observations as the judge reads them, in order, within `budget` characters: when
/// they do not fit, each observation gets an equal share of what is left (short ones keep all of
/// theirs) and says how much of it is not shown.
pub fn render(observed: &[Observed], budget: usize) -> String {
    if observed.is_empty() {
        return "(the assistant called no API)".into();
    }
    let heads: Vec<String> = observed.iter().map(head).collect();
    let fixed: usize = heads.iter().map(|h| h.chars().count() + 2).sum();
    let lengths: Vec<usize> = observed.iter().map(|o| o.text.chars().count()).collect();
    let shares = fair_shares(&lengths, budget.saturating_sub(fixed));
    let mut out = String::new();
    for ((head, o), share) in heads.iter().zip(observed).zip(shares) {
        out.push_str(head);
        out.push('\n');
        let len = o.text.chars().count();
        if share >= len {
            out.push_str(&o.text);
        } else {
            out.push_str(&cut(&o.text, share));
            out.push_str(&format!(" [… {} more characters not shown]", len - share));
        }
        out.push_str("\n\n");
    }
    out.trim_end().to_string()
}

/// Every call and observation of `answer` as the judge reads them: each observation whole up to
/// `max_observation_chars`, all within `budget`.
pub fn judge_view(answer: &Answer, max_observation_chars: usize, budget: usize) -> String {
    render(&observations(answer, max_observation_chars), budget)
}

/// Water-filling: each length gets at most itself, and what the short ones leave is shared by the
/// long ones, so the total stays within `budget`.
fn fair_shares(lengths: &[usize], budget: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    let mut shares = vec![0; lengths.len()];
    let mut left = budget;
    for (k, &i) in order.iter().enumerate() {
        let each = left / (lengths.len() - k);
        shares[i] = lengths[i].min(each);
        left -= shares[i];
    }
    shares
}

/// Answers with our record, for tests.
#[cfg(test)]
pub(crate) mod fixture {
    use serde_json::{Value, json};

    use crate::QueryKey;
    use crate::input::{Answer, Converted, ConvertedAnswer, Record};
    use crate::input::{RecordObservation, RecordStep};

    /// An answer of our run format: one call to `name` whose observation the answer file keeps cut at
    /// `cut_at` characters (ToolBench: 1,024) while our record keeps the whole `response`, then
    /// `final_answer`.
    pub fn recorded(
        query: &str,
        name: &str,
        response: Value,
        final_answer: &str,
        cut_at: usize,
    ) -> Answer {
        // ToolBench's text: Python's json.dumps (spaced, non-ASCII escaped), cut.
        let full = sum2act_core::tools::observation::python_dumps_as(
            &json!({"error": "", "response": response}),
            sum2act_core::tools::observation::Ascii::Keep,
        )
        .chars()
        .map(|c| match c {
            c if c.is_ascii() => c.to_string(),
            c => format!("\\u{:04x}", c as u32),
        })
        .collect::<String>();
        let shown = match full.char_indices().nth(cut_at) {
            Some((i, _)) => format!("{}...", &full[..i]),
            None => full,
        };
        let finish =
            json!({"return_type": "give_answer", "final_answer": final_answer}).to_string();
        let details = json!([{"role": "tool", "message": {"name": name, "arguments": "{}", "response": shown}, "next": [
            {"role": "tool", "message": {"name": "Finish", "arguments": finish, "response": ""}, "next": []}]}]);
        let record = Record {
            finish: sum2act_core::toolbench::answer::FinishKind::GiveAnswer.into(),
            answer: final_answer.into(),
            steps: vec![RecordStep {
                action: name.into(),
                arguments: "{}".into(),
                observation: RecordObservation {
                    text: shown,
                    error: String::new(),
                    response,
                    reply_chars: None,
                },
            }],
            ..Record::default()
        };
        Answer {
            key: QueryKey::new("G1", 1),
            converted: Converted {
                query: query.into(),
                available_tools: vec![json!({"name": name}), json!({"name": "Finish"})],
                answer: ConvertedAnswer {
                    method: "react".into(),
                    total_steps: 4,
                    final_answer: finish,
                    answer_details: details,
                },
            },
            record: Some(record),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An answer whose one call's observation was cut at 40 characters in the answer file, with our
    /// record holding the whole reply (or not).
    fn cut_answer(with_record: bool) -> Answer {
        let response = json!({"films": [{"title": "Bolt", "runtime": "96 min"}, {"title": "Wall-E", "runtime": "98 min"}]});
        let mut a = fixture::recorded("films of 2008", "films_for_x", response, "", 40);
        if !with_record {
            a.record = None;
        }
        a
    }

    #[test]
    fn the_judge_reads_the_whole_observation_from_the_record() {
        let full = observations(&cut_answer(true), 16_000);
        assert_eq!(full.len(), 1, "Finish is not an observation");
        assert!(full[0].restored);
        assert!(full[0].text.contains("98 min"), "{}", full[0].text);
        let shown = observations(&cut_answer(false), 16_000);
        assert!(!shown[0].restored && !shown[0].text.contains("98 min"));
        let capped = observations(&cut_answer(true), 30);
        assert!(capped[0].text.chars().count() <= 33, "{}", capped[0].text);
    }

    /// A reply just over ToolBench's cut whose compact JSON is shorter than the spaced text the agent
    /// saw (the dev run's crypto symbols: the timestamp at the end was in no judge prompt), and one
    /// whose accents the cut text escapes.
    #[test]
    fn a_reply_just_over_the_cut_is_restored_whatever_its_compact_length() {
        let symbols: Vec<String> = (0..95).map(|i| format!("S{i:03}USD")).collect();
        let response = json!({"symbols": symbols, "timestamp": 1718365204});
        let compact = json!({"error": "", "response": response}).to_string();
        assert!(compact.chars().count() < 1024, "{}", compact.len());
        let a = fixture::recorded("symbols", "v1_cryptosymbols", response, "", 1024);
        let o = &observations(&a, 16_000)[0];
        assert!(o.restored && o.text.contains("1718365204"), "{}", o.text);
        assert!(
            o.text
                .starts_with(r#"{"error": "", "response": {"symbols": ["S000USD", "#)
        );
        let street =
            json!({"stations": [{"street": "Arnulfstra\u{df}e 1"}], "pad": "x".repeat(1100)});
        let a = fixture::recorded("stations", "stations_for_flixbus", street, "", 1024);
        let o = &observations(&a, 16_000)[0];
        assert!(
            o.restored && o.text.contains("Arnulfstra\u{df}e"),
            "{}",
            o.text
        );
    }

    #[test]
    fn rendering_keeps_every_step_within_the_budget() {
        let step = |n: usize, len: usize| Observed {
            step: n,
            name: format!("f{n}"),
            arguments: "{}".into(),
            text: "x".repeat(len),
            restored: false,
            read: None,
            seen: Seen::Path,
        };
        let obs = vec![step(1, 100), step(2, 5000), step(3, 5000)];
        let text = render(&obs, 2000);
        assert!(text.chars().count() < 2100, "{}", text.chars().count());
        assert!(text.contains("step 1: f1({})\n") && text.contains("step 3: f3({})"));
        assert!(
            text.contains(&"x".repeat(100)),
            "short observations stay whole"
        );
        assert!(text.contains("more characters not shown"));
        assert_eq!(render(&obs, 1_000_000).matches("not shown").count(), 0);
        assert_eq!(render(&[], 100), "(the assistant called no API)");
        assert_eq!(fair_shares(&[10, 50, 50], 70), vec![10, 30, 30]);
    }
}
