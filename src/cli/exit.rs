//! Exit codes: 0 ok, 1 the run or its output failed, 2 bad input (flags, files, the model setup).

use std::process::ExitCode;

use sum2act_core::batch::BatchError;
use sum2act_core::llm::LlmError;
use sum2act_eval::EvalError;

/// A problem with what the user gave us (flags, files): exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// A library error that knows whether the user's input is at fault rather than the run.
pub trait InputFault: std::error::Error + Send + Sync + 'static {
    fn is_bad_input(&self) -> bool;
}

impl InputFault for BatchError {
    fn is_bad_input(&self) -> bool {
        BatchError::is_bad_input(self)
    }
}

impl InputFault for EvalError {
    fn is_bad_input(&self) -> bool {
        EvalError::is_bad_input(self)
    }
}

impl InputFault for sum2act_server::by_hand::ByHandError {
    fn is_bad_input(&self) -> bool {
        sum2act_server::by_hand::ByHandError::is_bad_input(self)
    }
}

impl InputFault for LlmError {
    fn is_bad_input(&self) -> bool {
        LlmError::is_bad_input(self)
    }
}

/// Turns a library error the user caused into [`BadInput`] (exit code 2, its message alone); any
/// other stays as it is (exit code 1, with its causes).
pub fn classify<E: InputFault>(e: E) -> anyhow::Error {
    if e.is_bad_input() {
        anyhow::Error::new(BadInput(e.to_string()))
    } else {
        anyhow::Error::new(e)
    }
}

/// The exit code of a failed command: 2 when anything in the error's chain is the user's input.
pub fn code_of(e: &anyhow::Error) -> ExitCode {
    let bad = e.chain().any(|c| {
        c.is::<BadInput>()
            || c.downcast_ref::<sum2act_core::toolbench::DataError>()
                .is_some_and(|e| !e.is_output())
            || c.is::<crate::config::ConfigError>()
            || c.downcast_ref::<sum2act_server::ServerError>()
                .is_some_and(sum2act_server::ServerError::is_bad_input)
            || c.downcast_ref::<LlmError>()
                .is_some_and(LlmError::is_bad_input)
    });
    ExitCode::from(if bad { 2 } else { 1 })
}
