//! The parts of a request, so a judge answers one narrow question per part: the judge splits each
//! request once (cached per query and judge model in the judge log), and the request model that
//! Sum2Act reads requests with (`sum2act_core::request`) checks the split; with no usable split, the
//! whole request is the one part.

pub use sum2act_core::toolbench::request_parts::{MAX_PART_CHARS, MAX_PARTS};
