//! What a failed call means for what the agent does next: a timeout or a 429 may be tried again (a
//! retry is not a repeat), a parameter error can be fixed, anything else says the API will not answer
//! this. Every method's repeat guard and Sum2Act's checklist read failures this way.

use serde::{Deserialize, Serialize};

use crate::tools::Observation;
use crate::tools::observation::ObservationCode;

/// Times a call that failed transiently may be made again before trying it once more is a repeat.
pub(crate) const MAX_RETRIES: u32 = 2;

/// What a failed call says about calling it again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The service did not answer in time or asked to slow down (timeout, 429, 5xx, unreachable): the
    /// same call may work a moment later.
    Transient,
    /// The call itself was wrong (an unknown function, unreadable or missing arguments): another call
    /// may work.
    Fixable,
    /// The API answered that it will not serve this (not working, unauthorised, no data).
    #[default]
    Final,
}

/// How an observation failed (`Final` for one that did not fail).
pub(crate) fn classify(obs: &Observation) -> FailureKind {
    let error = obs.error.to_lowercase();
    match obs.code {
        ObservationCode::Timeout
        | ObservationCode::TooManyRequests
        | ObservationCode::RateLimit => FailureKind::Transient,
        ObservationCode::NoSuchFunction => FailureKind::Fixable,
        ObservationCode::HttpError if transient_http(&error) => FailureKind::Transient,
        _ if error.starts_with("tool input parse error")
            || error.starts_with("parameter error") =>
        {
            FailureKind::Fixable
        }
        _ => FailureKind::Final,
    }
}

/// An HTTP failure worth retrying: 429, a server error, or no connection at all.
fn transient_http(error: &str) -> bool {
    let status = error
        .split("status_code=")
        .nth(1)
        .and_then(|s| s.get(..3))
        .and_then(|s| s.parse::<u16>().ok());
    match status {
        Some(s) => s == 429 || s >= 500,
        None => ["cannot reach", "timed out", "connection", "unreachable"]
            .iter()
            .any(|m| error.contains(m)),
    }
}

/// Whether an observation failed in a way a retry may mend.
pub(crate) fn is_transient(obs: &Observation) -> bool {
    obs.failed && classify(obs) == FailureKind::Transient
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::common::harness_observation;
    use crate::tools::observation::{NOT_WORKING_ERROR, TIMEOUT_ERROR};

    fn failed(c: ObservationCode, error: &str) -> Observation {
        Observation {
            code: c,
            ..harness_observation("f", "{}", error)
        }
    }

    #[test]
    fn timeouts_and_429_are_transient_parameter_errors_fixable_the_rest_final() {
        assert_eq!(
            classify(&failed(ObservationCode::Timeout, TIMEOUT_ERROR)),
            FailureKind::Transient
        );
        let too_many = failed(
            ObservationCode::HttpError,
            "request invalid, data error. status_code=429",
        );
        assert_eq!(classify(&too_many), FailureKind::Transient);
        let server = failed(
            ObservationCode::HttpError,
            "request invalid, data error. status_code=503",
        );
        assert!(is_transient(&server));
        let gone = failed(
            ObservationCode::HttpError,
            "request invalid, data error. status_code=404",
        );
        assert_eq!(classify(&gone), FailureKind::Final);
        let params = failed(
            ObservationCode::Ok,
            "Parameter error...\nmissing required parameter 'city'",
        );
        assert_eq!(classify(&params), FailureKind::Fixable);
        assert_eq!(
            classify(&failed(ObservationCode::NotWorking, NOT_WORKING_ERROR)),
            FailureKind::Final
        );
    }
}
