//! A fluent helper for driving the `sum2act` binary as a user would, in the style of `just`'s tests:
//! `Test::new().args(["data", "stats"]).run().success().stdout_has("catalogue")`.
#![allow(dead_code)]

pub mod http;
pub mod judged;
pub mod mcp;
pub mod tools;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The shared ToolBench data beside the checkout, when present (tests that need it skip otherwise).
pub fn shared_toolbench() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/toolbench");
    p.join("queries").is_dir().then_some(p)
}

/// The shipped sample data directory.
pub fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("toolbench/sample")
}

/// Variables removed from every spawned `sum2act`: tests never reach a real endpoint, or the user's data
/// or config, by accident.
pub const CLEARED_ENV: [&str; 13] = [
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "OPENAI_API_KEY",
    "OPENAI_KEY",
    "GPT_MODEL",
    "TOOLBENCH_SERVICE_URL",
    "SERVICE_URL",
    "SUM2ACT_MODEL",
    "SUM2ACT_DATA",
    "SUM2ACT_CONFIG",
    "SUM2ACT_PROMPTS",
    "SUM2ACT_LLM_SPIN",
    "OMP_WAIT_POLICY",
];

/// A fresh data directory holding a copy of the shipped sample's `parts` (`queries`, `tools`,
/// `response_cache`), for a test that changes some of it.
pub fn sample_copy(parts: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-r")
        .args(parts.iter().map(|p| sample().join(p)))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success(), "cannot copy the sample");
    dir
}

/// The shipped sample's queries of one subset, as JSON.
pub fn sample_queries(subset: &str) -> serde_json::Value {
    let path = sample().join("queries").join(format!("{subset}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The data a `report` page embeds (the JSON of its `application/json` script element).
pub fn report_data(html: &str) -> serde_json::Value {
    let tag = "type=\"application/json\">";
    let start = html.find(tag).expect("data tag") + tag.len();
    let end = start + html[start..].find("</script>").expect("end of data");
    serde_json::from_str(&html[start..end]).expect("embedded JSON parses")
}

/// The file names in one subset folder of a run directory, sorted (none when it does not exist).
pub fn run_files(out: &Path, subset: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join(subset))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

pub struct Test {
    cmd: Command,
    stdin: Option<String>,
}

impl Default for Test {
    fn default() -> Self {
        Self::new()
    }
}

impl Test {
    pub fn new() -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sum2act"));
        for var in CLEARED_ENV {
            cmd.env_remove(var);
        }
        Test { cmd, stdin: None }
    }

    pub fn arg(mut self, a: impl AsRef<std::ffi::OsStr>) -> Self {
        self.cmd.arg(a);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.cmd.args(args);
        self
    }

    /// `run` of one query with the mock model: `run --query-id ID --subset SUBSET --model mock`.
    pub fn run_query(self, id: &str, subset: &str) -> Self {
        self.args([
            "run",
            "--query-id",
            id,
            "--subset",
            subset,
            "--model",
            "mock",
        ])
    }

    /// `batch --model mock --progress plain`; the test adds its own flags.
    pub fn batch_mock(self) -> Self {
        self.args(["batch", "--model", "mock", "--progress", "plain"])
    }

    /// Judges with the mock judge at `url` in ToolEval's mode:
    /// `--base-url URL --judge mock-judge --judge-mode tooleval`.
    pub fn tooleval_judge(self, url: &str) -> Self {
        self.args([
            "--base-url",
            url,
            "--judge",
            "mock-judge",
            "--judge-mode",
            "tooleval",
        ])
    }

    pub fn env(mut self, k: &str, v: impl AsRef<std::ffi::OsStr>) -> Self {
        self.cmd.env(k, v);
        self
    }

    pub fn env_remove(mut self, k: &str) -> Self {
        self.cmd.env_remove(k);
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cmd.current_dir(dir);
        self
    }

    pub fn stdin(mut self, text: impl Into<String>) -> Self {
        self.stdin = Some(text.into());
        self
    }

    /// Starts the command as a server (`serve --port 0 ...`) and waits for the line naming its URL.
    pub fn serve(self) -> Served {
        self.serve_with(Stdio::null())
    }

    /// As [`Test::serve`], with standard error piped for the test to read once it stopped the server.
    pub fn serve_logged(self) -> Served {
        self.serve_with(Stdio::piped())
    }

    fn serve_with(mut self, stderr: Stdio) -> Served {
        let mut child = self
            .cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn sum2act serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .last()
            .unwrap_or_default()
            .to_string();
        Served { child, url, line }
    }

    /// Starts the command in the background with its output discarded (the test waits, signals or
    /// kills it).
    pub fn spawn(mut self) -> Child {
        self.cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn sum2act")
    }

    pub fn run(mut self) -> Outcome {
        use std::io::Write;
        self.cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        self.cmd.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let mut child = self.cmd.spawn().expect("spawn sum2act");
        if let Some(text) = self.stdin.take()
            && let Some(mut pipe) = child.stdin.take()
        {
            let _ = pipe.write_all(text.as_bytes());
        }
        Outcome(child.wait_with_output().expect("wait for sum2act"))
    }
}

/// `sum2act serve` as a child process, killed when dropped.
pub struct Served {
    pub child: Child,
    /// The URL it announced (the last word of its first line).
    pub url: String,
    /// Its first line of output.
    pub line: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Outcome(pub Output);

impl Outcome {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).to_string()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).to_string()
    }

    pub fn code(&self) -> Option<i32> {
        self.0.status.code()
    }

    fn show(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code(),
            self.stdout(),
            self.stderr()
        )
    }

    pub fn success(self) -> Self {
        assert!(
            self.0.status.success(),
            "expected success, got {}",
            self.show()
        );
        self
    }

    pub fn failure(self, code: i32) -> Self {
        assert_eq!(
            self.code(),
            Some(code),
            "expected exit {code}, got {}",
            self.show()
        );
        self
    }

    pub fn stdout_has(self, needle: &str) -> Self {
        assert!(
            self.stdout().contains(needle),
            "stdout lacks {needle:?}: {}",
            self.show()
        );
        self
    }

    pub fn stderr_has(self, needle: &str) -> Self {
        assert!(
            self.stderr().contains(needle),
            "stderr lacks {needle:?}: {}",
            self.show()
        );
        self
    }

    pub fn no_panic(self) -> Self {
        assert!(
            !self.stderr().contains("panicked"),
            "panicked: {}",
            self.show()
        );
        self
    }
}
#[path = "../support/mock_openai.rs"]
pub mod mock_openai;

/// The scripted OpenAI-compatible model (tests/cli/support/mock_openai.rs) on its own thread, stopped on drop.
pub struct Model {
    pub url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Model {
    pub fn start(latency_ms: u64) -> Model {
        let (url, thread, stop) =
            mock_openai::MockOpenAi::spawn_thread(std::time::Duration::from_millis(latency_ms));
        Model {
            url,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
