//! The media tools as an MCP server (rmcp) over stdio: `tools/list` gives the catalogue, `tools/call`
//! runs a tool. A tool's failure is an MCP tool error (`isError: true` and one line of text), so the
//! client shows the model what went wrong; an unknown method, or an unknown tool (as the MCP spec
//! says, and as `serve --mcp` answers), is a protocol error.

use std::sync::Arc;

use base64::Engine;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use super::{BinaryKind, Media, MediaOptions, MediaTool, Output};

/// The MCP server around [`Media`].
#[derive(Debug, Clone)]
pub struct MediaServer {
    media: Arc<Media>,
}

impl MediaServer {
    pub fn new(options: MediaOptions) -> Self {
        MediaServer {
            media: Arc::new(Media::new(options)),
        }
    }

    /// The catalogue as MCP tools.
    pub fn tools() -> Vec<Tool> {
        MediaTool::ALL
            .into_iter()
            .map(|t| {
                let schema = match t.input_schema() {
                    serde_json::Value::Object(map) => map,
                    _ => serde_json::Map::new(),
                };
                Tool::new(t.name(), t.description(), Arc::new(schema))
            })
            .collect()
    }

    /// Runs one call into an MCP result: the summary as JSON text first, then the file (if any).
    pub async fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> CallToolResult {
        match self.media.call(name, arguments).await {
            Ok(output) => CallToolResult::success(content(output)),
            Err(e) => {
                tracing::info!("media tool {name} failed: {e}");
                CallToolResult::error(vec![ContentBlock::text(e.to_string())])
            }
        }
    }
}

fn content(output: Output) -> Vec<ContentBlock> {
    let mut blocks = vec![ContentBlock::text(output.summary.to_string())];
    if let Some(b) = output.binary {
        let data = base64::engine::general_purpose::STANDARD.encode(&b.bytes);
        blocks.push(match b.kind {
            BinaryKind::Image => ContentBlock::image(data, b.mime),
            BinaryKind::Audio => ContentBlock::audio(data, b.mime),
        });
    }
    blocks
}

impl ServerHandler for MediaServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        // The name hosts space the tools under by default (our harness: `mcp__media__ocr`).
        info.server_info = Implementation::new("media", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "Media tools on real files: OCR, text to speech, speech to text, image edits, QR codes, metadata. File arguments take an absolute path, an http(s) URL or a data: URL; images and audio come back as MCP image/audio content."
                .into(),
        );
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Self::tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        Self::tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if MediaTool::parse(&request.name).is_none() {
            return Err(crate::mcp::unknown_tool(&request.name));
        }
        Ok(self
            .call(&request.name, request.arguments.unwrap_or_default())
            .await
            .into())
    }
}

/// Serves the media tools over stdin/stdout until the client closes the connection.
pub async fn serve_stdio(options: MediaOptions) -> std::io::Result<()> {
    let running = MediaServer::new(options)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(format!("MCP initialisation failed: {e}")))?;
    running
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(format!("the MCP session ended with an error: {e}")))?;
    Ok(())
}
