//! Integration tests: the real `sum2act` binary driven as a user would, one feature per file. One test
//! binary instead of one per file: each would link the whole crate (llama.cpp and tantivy included).

mod common;

mod batch;
mod eval;
mod examples;
mod llm_client;
mod llm_local;
mod report;
mod retrieve;
mod run;
mod sample_data;
mod serve_llm;
mod tool_server;
