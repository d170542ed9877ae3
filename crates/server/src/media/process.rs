//! Running the system programs some tools wrap (tesseract, espeak-ng, pocketsphinx): input on stdin,
//! output read from stdout up to a cap, a time limit, and the child killed if it is dropped. A program
//! that is not installed is reported with the Debian package that provides it.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::error::{MediaError, human_bytes};

/// Longest a wrapped program may run.
pub const PROGRAM_TIMEOUT: Duration = Duration::from_secs(60);
/// Most of a program's stderr kept for the error message.
const STDERR_KEEP: u64 = 4096;

/// Checks a word passed to a program as an option's value (a voice, a language): letters, digits and
/// the `extra` characters only, never a leading `-`, so it cannot be read as another option.
pub fn safe_word<'a>(
    arg: &str,
    value: &'a str,
    extra: &[char],
    example: &str,
) -> Result<&'a str, MediaError> {
    let ok = !value.is_empty()
        && value.len() <= 60
        && !value.starts_with('-')
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(&c));
    if ok {
        Ok(value)
    } else {
        Err(MediaError::argument(
            arg,
            format!("`{value}` is not {example}"),
        ))
    }
}

/// A system program and the Debian package that installs it.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    pub name: &'static str,
    pub package: &'static str,
}

impl Program {
    /// Runs the program with `args`, writing `input` to its stdin; returns its stdout (at most
    /// `max_stdout` bytes) when it exits with status 0.
    pub async fn run(
        &self,
        args: &[&str],
        input: Vec<u8>,
        max_stdout: u64,
    ) -> Result<Vec<u8>, MediaError> {
        let mut child = Command::new(self.name)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| self.spawn_error(e))?;
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(self.fail("its standard streams could not be opened"));
        };
        // Write, read both streams and wait at once, so a program that fills a pipe cannot deadlock us.
        let write = async move {
            // A program may exit without reading all of its input; its status says whether that is wrong.
            let _ = stdin.write_all(&input).await;
            drop(stdin);
        };
        let work = async {
            let ((), out, err, status) = tokio::join!(
                write,
                read_capped(stdout, max_stdout),
                read_capped(stderr, STDERR_KEEP),
                child.wait()
            );
            (out, err, status)
        };
        let (out, err, status) =
            tokio::time::timeout(PROGRAM_TIMEOUT, work)
                .await
                .map_err(|_| {
                    self.fail(format!(
                        "ran past its time limit of {} s",
                        PROGRAM_TIMEOUT.as_secs()
                    ))
                })?;
        let status = status.map_err(|e| self.fail(e.to_string()))?;
        let (out, out_over) = out.map_err(|e| self.fail(e.to_string()))?;
        let (err, _) = err.unwrap_or_default();
        if out_over {
            return Err(MediaError::Program {
                program: self.name,
                message: format!(
                    "its output is over the limit of {}",
                    human_bytes(max_stdout)
                ),
            });
        }
        if !status.success() {
            let said = String::from_utf8_lossy(&err);
            let said = said.trim();
            return Err(self.fail(if said.is_empty() {
                format!("exited with {status}")
            } else {
                format!("exited with {status}: {}", last_lines(said))
            }));
        }
        Ok(out)
    }

    fn spawn_error(&self, e: std::io::Error) -> MediaError {
        if e.kind() == std::io::ErrorKind::NotFound {
            MediaError::MissingProgram {
                program: self.name,
                package: self.package,
            }
        } else {
            self.fail(format!("cannot start it: {e}"))
        }
    }

    fn fail(&self, message: impl Into<String>) -> MediaError {
        MediaError::Program {
            program: self.name,
            message: message.into(),
        }
    }
}

/// Reads at most `cap` bytes; the flag says whether there was more (the rest is drained and dropped,
/// so the program is not blocked on a full pipe).
async fn read_capped(
    mut stream: impl AsyncRead + Unpin,
    cap: u64,
) -> std::io::Result<(Vec<u8>, bool)> {
    let mut kept = Vec::new();
    (&mut stream).take(cap).read_to_end(&mut kept).await?;
    let extra = tokio::io::copy(&mut stream, &mut tokio::io::sink()).await?;
    Ok((kept, extra > 0))
}

/// The last lines of a program's complaint, on one line.
fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    tail.join(" / ").chars().take(400).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_program_names_its_package() {
        let p = Program {
            name: "sum2act-no-such-program",
            package: "sum2act-demo-package",
        };
        let e = p.run(&[], Vec::new(), 10).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "`sum2act-no-such-program` is not installed: install the Debian package `sum2act-demo-package` (scripts/setup.sh does)"
        );
    }

    #[tokio::test]
    async fn output_is_capped_and_failures_quote_stderr() {
        let sh = Program {
            name: "sh",
            package: "dash",
        };
        let out = sh.run(&["-c", "cat"], b"abc".to_vec(), 10).await.unwrap();
        assert_eq!(out, b"abc");
        let e = sh
            .run(&["-c", "head -c 100 /dev/zero"], Vec::new(), 10)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("over the limit of 10 B"), "{e}");
        let e = sh
            .run(&["-c", "echo 'bad voice' >&2; exit 3"], Vec::new(), 10)
            .await
            .unwrap_err();
        assert!(e.to_string().ends_with("exit status: 3: bad voice"), "{e}");
    }
}
