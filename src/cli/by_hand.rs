//! `sum2act by-hand next|reply|status|release`: the reader's side of `serve-llm --by-hand DIR`. A
//! reader claims a request of its role, reads it, and replies; one shell command can reply and fetch
//! the next (`by-hand reply DIR 12 - <<'EOF' ... EOF && by-hand next DIR --role agent --wait 120`).
//! A reply file is dated (its modification time) so that one left over from an earlier request is
//! refused; see `sum2act_server::by_hand::guard`.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use clap::{Args, Subcommand};

use super::exit::classify;
use super::values::named;
use sum2act_core::llm::purpose::ReaderRole;
use sum2act_server::by_hand::guard::ReplyFile;
use sum2act_server::by_hand::queue::{MAX_REPLY_BYTES, Queue};
use sum2act_server::by_hand::reader::{self, Next, ReplyForm, Source};

/// Exit code of `next` when nothing of the role was pending within `--wait`.
pub const EXIT_NOTHING: u8 = 3;
/// Exit code of `next` when nothing was pending and `DIR/STOP` exists.
pub const EXIT_STOP: u8 = 4;

#[derive(Debug, Args)]
pub struct ByHandArgs {
    #[command(subcommand)]
    pub command: ByHandCommand,
}

#[derive(Debug, Subcommand)]
pub enum ByHandCommand {
    /// Claim the oldest pending request of a role and print it. Exit 3: nothing pending within
    /// --wait; exit 4: nothing pending and DIR/STOP exists.
    Next {
        /// The folder given to `serve-llm --by-hand`.
        dir: PathBuf,
        /// The reader's role.
        #[arg(long, value_parser = named::<ReaderRole>(ReaderRole::NAMES))]
        role: ReaderRole,
        /// Seconds to wait for a request when none is pending (checked every 200 ms).
        #[arg(long, default_value_t = 0, value_name = "SECS")]
        wait: u64,
    },
    /// Answer a claimed request with a JSON reply {"content": ..., "tool_calls": [{"name": ...,
    /// "arguments": {...}}]} (content may be a JSON value itself), checked against the request first.
    /// Refused (the request stays claimed): a FILE last written before the request was claimed, and a
    /// reply over 200 bytes identical to one accepted for another request of the role.
    Reply {
        dir: PathBuf,
        /// The request's number.
        id: u64,
        /// The reply file; `-` (default): standard input.
        #[arg(default_value = "-", value_name = "FILE|-")]
        file: String,
        /// The input is the content as plain text, not the JSON reply format.
        #[arg(long)]
        text: bool,
        /// The reply repeats one accepted for another request word for word, on purpose.
        #[arg(long)]
        repeat: bool,
    },
    /// Requests per role: pending, claimed, answered, withdrawn; the oldest pending and claimed.
    Status { dir: PathBuf },
    /// Put a claimed request back to pending (its reader died or gave up).
    Release { dir: PathBuf, id: u64 },
}

pub async fn run(args: ByHandArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ByHandCommand::Next { dir, role, wait } => {
            let queue = Queue::open(&dir).map_err(classify)?;
            let found = reader::next(&queue, role, Duration::from_secs(wait))
                .await
                .map_err(classify)?;
            Ok(match found {
                Next::Claimed { rendered, .. } => {
                    print!("{rendered}");
                    ExitCode::SUCCESS
                }
                Next::Nothing => {
                    println!("nothing pending for role {role} (waited {wait} s); run it again");
                    ExitCode::from(EXIT_NOTHING)
                }
                Next::Stop => {
                    println!(
                        "STOP: nothing pending for role {role} and {}/STOP exists; you are done",
                        dir.display()
                    );
                    ExitCode::from(EXIT_STOP)
                }
            })
        }
        ByHandCommand::Reply {
            dir,
            id,
            file,
            text,
            repeat,
        } => {
            let queue = Queue::open(&dir).map_err(classify)?;
            let (input, dated) = read_input(&file)?;
            let form = if text {
                ReplyForm::Text
            } else {
                ReplyForm::Json
            };
            let source = Source {
                file: dated,
                repeat,
            };
            let a = reader::answer(&queue, id, &input, form, &source).map_err(classify)?;
            eprintln!(
                "request {id} answered ({} function call(s), {} tokens)",
                a.reply.tool_calls.len(),
                a.tokens
            );
            if a.tokens > u64::from(a.max_tokens) {
                eprintln!(
                    "note: {} tokens is above the request's max_tokens {} (a model would have been cut); keep replies shorter",
                    a.tokens, a.max_tokens
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        ByHandCommand::Status { dir } => {
            let queue = Queue::open(&dir).map_err(classify)?;
            print!("{}", status_table(&queue)?);
            Ok(ExitCode::SUCCESS)
        }
        ByHandCommand::Release { dir, id } => {
            let queue = Queue::open(&dir).map_err(classify)?;
            let role = reader::release(&queue, id).map_err(classify)?;
            println!("request {id} ({role}) is pending again");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The reply from a file or standard input, refused beyond the reply size cap, with the file's
/// modification time when it is a file (taken from the open file, so it is the one read).
fn read_input(file: &str) -> anyhow::Result<(String, Option<ReplyFile>)> {
    let mut bytes = Vec::new();
    let limit = MAX_REPLY_BYTES + 1;
    let (read, modified) = if file == "-" {
        let read = std::io::stdin().take(limit).read_to_end(&mut bytes);
        (read, stdin_file_time())
    } else {
        match std::fs::File::open(file) {
            Ok(f) => {
                let modified = f.metadata().and_then(|m| m.modified()).ok();
                (f.take(limit).read_to_end(&mut bytes), modified)
            }
            Err(e) => (Err(e), None),
        }
    };
    read.map_err(|e| super::BadInput(format!("{file}: {e}")))?;
    if bytes.len() as u64 > MAX_REPLY_BYTES {
        return Err(super::BadInput(format!("{file}: the reply is larger than 4 MiB")).into());
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| super::BadInput(format!("{file}: the reply is not UTF-8")))?;
    let name = if file == "-" {
        "standard input (a redirected file)"
    } else {
        file
    };
    let dated = modified.map(|modified| ReplyFile {
        name: name.to_string(),
        modified,
    });
    Ok((text, dated))
}

/// Standard input's modification time when it is redirected from a file (`< reply.json`, a heredoc
/// that the shell stores as a file): such a file may be left over too. A pipe or terminal has none.
#[cfg(unix)]
fn stdin_file_time() -> Option<SystemTime> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let meta = std::fs::File::from(fd).metadata().ok()?;
    meta.is_file().then(|| meta.modified().ok()).flatten()
}

#[cfg(not(unix))]
fn stdin_file_time() -> Option<SystemTime> {
    None
}

fn status_table(queue: &Queue) -> anyhow::Result<String> {
    let mut s = format!(
        "{:<10} {:>8} {:>8} {:>9} {:>10}  {:<22} {}\n",
        "role", "pending", "claimed", "answered", "withdrawn", "oldest pending", "oldest claimed"
    );
    let age = |o: Option<(u64, Duration)>| {
        o.map_or_else(
            || "-".to_string(),
            |(id, d)| format!("#{id}, {} s", d.as_secs()),
        )
    };
    for (role, r) in reader::status(queue).map_err(classify)? {
        s.push_str(&format!(
            "{:<10} {:>8} {:>8} {:>9} {:>10}  {:<22} {}\n",
            role.name(),
            r.pending,
            r.claimed,
            r.answered,
            r.withdrawn,
            age(r.oldest_pending),
            age(r.oldest_claimed)
        ));
    }
    Ok(s)
}
