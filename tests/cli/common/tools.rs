//! Catalogue fixtures and tool-environment set-up shared by the tool server and caller tests.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use sum2act_core::toolbench::{Catalog, Function};
use sum2act_core::tools::{HttpSource, ToolConfig, ToolRequest};
use sum2act_server::{ServerHandle, VirtualApi, spawn};

/// The shared ToolBench data when present, else the shipped sample.
pub fn data_dir() -> PathBuf {
    super::shared_toolbench().unwrap_or_else(super::sample)
}

/// The catalogue under `dir/tools`.
pub fn catalog(dir: &Path) -> Arc<Catalog> {
    Arc::new(Catalog::load(&dir.join("tools")).unwrap().catalog)
}

/// Writes a data folder's `tools/Data/record_desk.json`: one API whose reply shape must be inferred
/// (no template, one required parameter), one with a data template, and a search (no template).
pub fn write_record_desk(root: &Path) {
    let dir = root.join("tools/Data");
    std::fs::create_dir_all(&dir).unwrap();
    let tool = json!({
        "tool_name": "Record Desk", "standardized_name": "record_desk", "category_name": "Data",
        "tool_description": "Looks up records and their statistics.", "title": "Record Desk",
        "api_list": [
            {"name": "Lookup record", "description": "Details of one record by its id.", "method": "GET",
             "required_parameters": [{"name": "record_id", "type": "STRING", "description": "The record id", "default": ""}],
             "optional_parameters": []},
            {"name": "Record stats", "description": "Counts of records by status.", "method": "GET",
             "required_parameters": [], "optional_parameters": [],
             "template_response": {"total": "int", "open": "int", "closed": "int"}},
            {"name": "Search records", "description": "Records whose title matches a query.", "method": "GET",
             "required_parameters": [{"name": "query", "type": "STRING", "description": "Words of the title", "default": ""}],
             "optional_parameters": []}
        ]
    });
    std::fs::write(dir.join("record_desk.json"), tool.to_string()).unwrap();
}

/// [`write_record_desk`] with `queries/G1_instruction.json`: query 1 needs a search, then a lookup.
pub fn write_record_desk_query(root: &Path) {
    write_record_desk(root);
    let api =
        |name: &str| json!({"category_name": "Data", "tool_name": "Record Desk", "api_name": name});
    let query = json!([{
        "query": "Find the record about salt roads and tell me its title and year.",
        "query_id": 1,
        "api_list": [api("Search records"), api("Lookup record")],
        "relevant APIs": [["Record Desk", "Search records"], ["Record Desk", "Lookup record"]]
    }]);
    std::fs::create_dir_all(root.join("queries")).unwrap();
    std::fs::write(root.join("queries/G1_instruction.json"), query.to_string()).unwrap();
}

pub fn loopback() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

/// The embedded virtual API server on loopback, and an HTTP source pointed at it.
pub async fn server(api: VirtualApi) -> (ServerHandle, HttpSource) {
    let handle = spawn(Arc::new(api), loopback()).await.unwrap();
    let source = HttpSource::new(&handle.url(), Some("secret-key".into())).unwrap();
    (handle, source)
}

/// Every API of a catalogue as an agent's function.
pub fn functions(catalog: &Catalog) -> Vec<Function> {
    catalog
        .tools()
        .iter()
        .flat_map(|t| {
            t.file
                .api_list
                .iter()
                .map(move |a| Function::from_doc(&t.api_doc(a), &t.standard_name))
        })
        .collect()
}

/// A caller configuration with a short timeout and back-off.
pub fn config() -> ToolConfig {
    ToolConfig {
        timeout: Duration::from_secs(5),
        backoff: Duration::from_millis(10),
        ..ToolConfig::default()
    }
}

/// A request for a function's API with this input and no stripping.
pub fn request(f: &Function, tool_input: Value) -> ToolRequest {
    ToolRequest {
        category: f.category.clone(),
        tool_name: f.tool.clone(),
        api_name: f.api.clone(),
        tool_input,
        strip: String::new(),
    }
}

/// Arguments that satisfy an API: every parameter at its documented default (or a placeholder).
pub fn default_args(f: &Function) -> Map<String, Value> {
    let mut args = Map::new();
    for p in f.doc.required() {
        let v = if p.default.is_null() || p.default == json!("") {
            json!("1")
        } else {
            p.default.clone()
        };
        args.insert(sum2act_core::toolbench::naming::param_name(&p.name), v);
    }
    args
}

/// One `/virtual` call naming a tool no catalogue has, from a test without a runtime of its own.
pub fn call_unknown(
    url: &str,
    category: &str,
    tool: &str,
    api: &str,
) -> Result<sum2act_core::tools::ToolReply, sum2act_core::tools::ToolError> {
    call(url, [category, tool, api], json!({}))
}

/// One `/virtual` call of `[category, tool, api]` with `input`, from a test without a runtime of its own.
pub fn call(
    url: &str,
    [category, tool, api]: [&str; 3],
    input: Value,
) -> Result<sum2act_core::tools::ToolReply, sum2act_core::tools::ToolError> {
    use sum2act_core::tools::ToolSource;
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        HttpSource::new(url, None)
            .unwrap()
            .call(&ToolRequest {
                category: category.into(),
                tool_name: tool.into(),
                api_name: api.into(),
                tool_input: input,
                strip: String::new(),
            })
            .await
    })
}
