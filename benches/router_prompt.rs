//! Router prompt size per step: Sum2Act's router sees a bounded state, ReAct sees the whole history.
//! Runs both for 20 steps with a scripted model over a tool that returns a realistic ~1 KB response,
//! and prints the prompt tokens (tiktoken cl100k) of each step.
//!
//! `cargo bench --bench router_prompt`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::{Value, json};
use sum2act_core::agent::{
    AgentOptions, Budget, QuietObserver, SolveContext, Solver, react::React, sum2act::Sum2Act,
};
use sum2act_core::llm::scripted::{ScriptedLlm, reply};
use sum2act_core::llm::{Completion, CompletionRequest, ToolCall, count_prompt_tokens};
use sum2act_core::prompts::Prompts;
use sum2act_core::toolbench::{ApiDoc, Function, Param, Task};
use sum2act_core::tools::{ToolConfig, ToolEnv, ToolError, ToolReply, ToolRequest, ToolSource};

const STEPS: u32 = 20;

struct Listings;

#[async_trait]
impl ToolSource for Listings {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        let items: Vec<Value> = (0..12)
            .map(|i| json!({"id": i, "title": format!("Listing {i} for {}", request.tool_input), "price": 100 + i, "url": format!("https://example.com/{i}")}))
            .collect();
        Ok(ToolReply::new(
            String::new(),
            json!({"results": items}),
            None,
        ))
    }

    fn describe(&self) -> String {
        "listings".into()
    }
}

fn task() -> Task {
    let doc = ApiDoc {
        category_name: "eCommerce".into(),
        tool_name: "Shop".into(),
        api_name: "search listings".into(),
        api_description: Some("Search product listings by keyword".into()),
        required_parameters: Some(vec![Param {
            name: "q".into(),
            kind: "STRING".into(),
            description: "keyword".into(),
            default: json!("lamp"),
        }]),
        optional_parameters: Some(vec![]),
        method: Some("GET".into()),
        template_response: None,
    };
    Task {
        subset: "bench".into(),
        query_id: 1,
        query: "Compare prices of twenty kinds of furniture and tell me the cheapest of each."
            .into(),
        functions: vec![Function::from_doc(&doc, "shop")],
        relevant: vec![],
    }
}

fn model() -> Arc<ScriptedLlm> {
    let turn = AtomicUsize::new(0);
    Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        let i = turn.load(Ordering::SeqCst);
        if req.purpose == "state" {
            let fact = format!(
                "item {i}: cheapest listing costs {} at https://example.com/{i}",
                100 + i
            );
            let facts = json!({"success": true, "new_facts": [fact], "failure_reason": "", "wrong_facts": []});
            return Ok(reply(&facts.to_string()));
        }
        turn.fetch_add(1, Ordering::SeqCst);
        Ok(Completion {
            content: "search the next item".into(),
            tool_calls: vec![ToolCall {
                id: format!("c{i}"),
                name: "search_listings_for_shop".into(),
                arguments: json!({"q": format!("item {i}")}).to_string(),
            }],
            ..Completion::default()
        })
    }))
}

async fn prompt_sizes(solver: &dyn Solver, purpose: &str, options: AgentOptions) -> Vec<u64> {
    let llm = model();
    let env = ToolEnv::new(Arc::new(Listings), ToolConfig::default());
    let ctx = SolveContext::new(
        llm.clone(),
        env.caller(task().functions),
        Arc::new(Prompts::embedded()),
        options,
        Arc::new(QuietObserver),
    );
    if let Err(e) = solver.solve(&task(), &ctx).await {
        eprintln!("episode failed: {e}");
    }
    llm.requests()
        .iter()
        .filter(|r| r.purpose == purpose)
        .map(count_prompt_tokens)
        .collect()
}

fn main() {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        eprintln!("cannot start a runtime");
        return;
    };
    // A small state budget so the cap is reached within 20 steps (the default is 600 tokens).
    let options = AgentOptions {
        budget: Budget {
            max_steps: STEPS,
            max_depth: Some(3 * STEPS),
            ..Budget::default()
        },
        state_token_budget: 250,
        ..AgentOptions::default()
    };
    let s2a = rt.block_on(prompt_sizes(
        &Sum2Act::new(&options),
        "router",
        options.clone(),
    ));
    let react = rt.block_on(prompt_sizes(
        &React::new(&options),
        "react",
        options.clone(),
    ));
    println!(
        "router prompt tokens per step (cl100k); Sum2Act state budget {} tokens",
        options.state_token_budget
    );
    println!("{:>4} {:>10} {:>10}", "step", "sum2act", "react");
    for i in 0..STEPS as usize {
        let a = s2a.get(i).map_or("-".to_string(), u64::to_string);
        let b = react.get(i).map_or("-".to_string(), u64::to_string);
        println!("{:>4} {:>10} {:>10}", i + 1, a, b);
    }
    let growth = |v: &[u64]| match (v.first(), v.last()) {
        (Some(f), Some(l)) => *l as f64 / (*f).max(1) as f64,
        _ => 0.0,
    };
    println!(
        "growth last/first: sum2act {:.2}x, react {:.2}x",
        growth(&s2a),
        growth(&react)
    );
}
