//! Integration tests: the real `sum2act` binary driven as a user would, one feature per file. One test
//! binary instead of one per file: each would link the whole crate (llama.cpp and tantivy included).

mod common;

mod batch;
mod broken_pipe;
mod by_hand;
mod calibrate;
mod eval;
mod examples;
mod exit_codes;
mod hardening;
mod judge_calibration;
mod judge_evidence;
mod llm_client;
mod llm_local;
mod mcp;
mod mcp_files;
mod media_server;
mod media_tasks;
mod messages;
mod methods;
mod query_limit;
mod reference_checklists;
mod reference_runs;
mod repeats;
mod report;
mod retrieve;
mod run;
mod run_lock;
mod safe_paths;
mod sample_data;
mod secrets;
mod serve_command;
mod serve_fidelity;
mod serve_llm;
mod serve_mirrorapi;
mod serve_save;
mod serve_simulation;
mod shards;
mod stabletoolbench;
mod strict_params;
mod tool_caller;
mod tool_prompt;
mod tool_server;
mod tool_server_down;
mod world;
