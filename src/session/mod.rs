//! The interactive session (`sum2act chat`): the user types requests, sees the router's actions, the
//! observations and the state live, and follows up in the same session: the Sum2Act state carries
//! over from one request to the next until `/reset`.

pub mod print;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use sum2act_core::agent::sum2act::{State, Sum2Act};
use sum2act_core::agent::toolset::{ToolChoice, ToolSearch, add_mcp, instruction_task};
use sum2act_core::agent::{AgentError, Episode, Observer};
use sum2act_core::setup::SolverEnv;
use sum2act_core::toolbench::{Catalog, DataError, Task};
use sum2act_retrieve::Retriever;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error(transparent)]
    Data(#[from] DataError),
}

/// What the loop should do after a line.
#[derive(Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Quit,
}

pub const HELP: &str = "Type a request, or a command:\n  /tools        tools used for the last request\n  /state        the current state (facts and failed calls)\n  /reset        forget the state and start over\n  /save FILE    save this session's episodes and state as JSON\n  /help         this text\n  /quit         leave (also Ctrl-D)";

/// Everything a session needs, and what it remembers.
pub struct Session {
    pub catalog: Arc<Catalog>,
    pub retriever: Option<Arc<Retriever>>,
    /// The model, the tools, the prompts and the limits (its solver is not used: a session is
    /// always Sum2Act, whose state carries over).
    pub env: SolverEnv,
    pub toolset: ToolChoice,
    pub observer: Arc<dyn Observer>,
    state: State,
    last_task: Option<Task>,
    episodes: Vec<Episode>,
}

impl Session {
    pub fn new(
        catalog: Arc<Catalog>,
        retriever: Option<Arc<Retriever>>,
        env: SolverEnv,
        toolset: ToolChoice,
        observer: Arc<dyn Observer>,
    ) -> Self {
        Session {
            catalog,
            retriever,
            env,
            toolset,
            observer,
            state: State::default(),
            last_task: None,
            episodes: Vec::new(),
        }
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    pub fn episodes(&self) -> &[Episode] {
        &self.episodes
    }

    /// Handles one line of input and prints the outcome.
    pub async fn handle(&mut self, line: &str) -> Result<Control, SessionError> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(Control::Continue);
        }
        let (cmd, rest) = line.split_once(' ').unwrap_or((line, ""));
        match cmd {
            "/quit" | "/exit" => return Ok(Control::Quit),
            "/help" => println!("{HELP}"),
            "/reset" => {
                self.state = State::default();
                self.last_task = None;
                println!("state cleared");
            }
            "/state" => print::print_state(&mut std::io::stdout(), &self.state.to_value()),
            "/tools" => match &self.last_task {
                Some(t) => {
                    for f in &t.functions {
                        println!("  {} — {}", f.name, f.doc.description());
                    }
                }
                None => println!(
                    "no request yet: tools are chosen per request ({})",
                    self.toolset
                ),
            },
            "/save" => {
                if rest.trim().is_empty() {
                    println!("usage: /save FILE");
                } else {
                    let path = PathBuf::from(rest.trim());
                    self.save(&path)?;
                    println!("saved {}", path.display());
                }
            }
            c if c.starts_with('/') => println!("unknown command {c}; /help lists them"),
            _ => self.ask(line).await?,
        }
        Ok(Control::Continue)
    }

    async fn ask(&mut self, request: &str) -> Result<(), SessionError> {
        let mut task = instruction_task(
            request,
            self.toolset,
            &self.catalog,
            self.retriever.as_deref().map(|r| r as &dyn ToolSearch),
        )?;
        task.query_id = self.episodes.len() as u64 + 1;
        if let Some(hub) = self.env.tools.mcp() {
            add_mcp(&mut task, self.toolset, hub.functions());
        }
        if task.functions.is_empty() {
            println!("no tools match this request; try rephrasing it");
            return Ok(());
        }
        let ctx = self
            .env
            .context(task.functions.clone(), None, self.observer.clone());
        let (episode, state) = Sum2Act::new(&self.env.options)
            .solve_from(&task, &ctx, self.state.clone())
            .await?;
        self.state = state;
        print_outcome(&episode);
        self.last_task = Some(task);
        self.episodes.push(episode);
        Ok(())
    }

    fn save(&self, path: &Path) -> Result<(), DataError> {
        let episodes: Vec<_> = self.episodes.iter().map(Episode::to_json).collect();
        let doc = json!({"state": self.state.to_value(), "episodes": episodes});
        sum2act_core::toolbench::io::write_json_atomic(path, &doc)
    }
}

/// The final answer and the counters of an episode, as the user sees them.
pub fn print_outcome(ep: &Episode) {
    let c = &ep.counters;
    println!("══ {} ══", ep.finish.as_str());
    if !ep.answer.is_empty() {
        println!("{}", sum2act_core::terminal::safe(&ep.answer));
    } else if let Some(e) = &ep.error {
        println!("(stopped: {})", sum2act_core::terminal::safe_line(e));
    } else {
        println!("(no answer)");
    }
    println!(
        "[{} steps · {} LLM calls · {} prompt + {} completion tokens · {} tool calls ({} failed) · {:.1} s]",
        c.steps,
        c.llm_calls,
        c.prompt_tokens,
        c.completion_tokens,
        c.tool_calls,
        c.failed_tool_calls,
        c.wall_ms as f64 / 1000.0
    );
}
