//! ToolBench data model and formats: queries, tool files, naming rules, function schemas.
//! Everything above this layer speaks in these types.

pub mod answer;
pub(crate) mod canonical;
mod catalog;
pub mod claims;
mod dataset;
mod error;
mod finish;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
pub mod io;
pub(crate) mod json_repair;
pub(crate) mod method;
mod missing;
mod model;
pub mod naming;
pub mod request_asks;
mod request_coordination;
pub mod request_parts;
pub mod request_split;
mod request_vocab;
mod schema;
pub(crate) mod stb_export;

pub use catalog::Catalog;

pub(crate) use dataset::check_query_text;
#[cfg(test)]
pub(crate) use dataset::source_root;
pub use dataset::{
    DATA_ENV, DataDir, SubsetStats, Task, check_subset_name, load_id_file, load_queries, sample_dir,
};
pub use error::DataError;
pub use missing::missing_tools;
pub use model::{ApiDoc, Param, Query, Tool, ToolApi, ToolFile};
pub(crate) use schema::{Backend, finish_schema, function_schemas};
pub use schema::{FINISH, Function};
