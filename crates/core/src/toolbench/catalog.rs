//! The tool catalogue: every `tools/{Category}/{tool}.json` under a folder, in memory. A broken file
//! does not sink the load: the rest loads and the broken ones are reported.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::DataError;
use super::io::read_json;
use super::model::{ApiDoc, Tool, ToolApi, ToolFile};
use super::naming::{pure_api_name, standardize};

/// The loaded tools, indexed for the lookups the agent, server and retriever make.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    tools: Vec<Tool>,
    /// (category, standard tool name) → index into `tools`.
    by_category: HashMap<(String, String), usize>,
    /// standard tool name → indices (a tool may sit in several categories).
    by_name: HashMap<String, Vec<usize>>,
}

/// The result of loading a tools tree: the catalogue and the files that could not be read.
#[derive(Debug, Default)]
pub struct CatalogLoad {
    pub catalog: Catalog,
    pub broken: Vec<DataError>,
}

impl Catalog {
    /// Loads every `*.json` directly under each category folder of `dir`.
    pub fn load(dir: &Path) -> Result<CatalogLoad, DataError> {
        let mut files: Vec<(String, PathBuf)> = Vec::new();
        let categories = std::fs::read_dir(dir).map_err(|e| DataError::io(dir, e))?;
        for entry in categories {
            let entry = entry.map_err(|e| DataError::io(dir, e))?;
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            let category = entry.file_name().to_string_lossy().to_string();
            let inner = std::fs::read_dir(&path).map_err(|e| DataError::io(&path, e))?;
            for file in inner {
                let file = file.map_err(|e| DataError::io(&path, e))?.path();
                if file.extension().is_some_and(|e| e == "json") && file.is_file() {
                    files.push((category.clone(), file));
                }
            }
        }
        files.sort();
        let mut load = CatalogLoad::default();
        for (category, path) in files {
            match Self::read_tool(&category, &path) {
                Ok(tool) => load.catalog.push(tool),
                Err(e) => load.broken.push(e),
            }
        }
        Ok(load)
    }

    fn read_tool(category: &str, path: &Path) -> Result<Tool, DataError> {
        let file: ToolFile = read_json(path)?;
        for (i, api) in file.api_list.iter().enumerate() {
            let params = api
                .required_parameters
                .iter()
                .chain(&api.optional_parameters);
            for (j, p) in params.enumerate() {
                if !p.has_known_type() {
                    return Err(DataError::invalid(
                        path,
                        format!(
                            "api_list[{i}] ({}) parameter {j} `{}`.type",
                            api.name, p.name
                        ),
                        format!("unknown parameter type {:?}", p.kind),
                    ));
                }
            }
        }
        let standard_name = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        Ok(Tool {
            category: category.to_string(),
            standard_name,
            file,
        })
    }

    /// Builds a catalogue from tools already in memory (tests, the sample generator).
    pub fn from_tools(tools: impl IntoIterator<Item = Tool>) -> Self {
        let mut c = Catalog::default();
        for t in tools {
            c.push(t);
        }
        c
    }

    fn push(&mut self, tool: Tool) {
        let i = self.tools.len();
        self.by_category
            .insert((tool.category.clone(), tool.standard_name.clone()), i);
        self.by_name
            .entry(tool.standard_name.clone())
            .or_default()
            .push(i);
        self.tools.push(tool);
    }

    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    pub fn tool_count(&self) -> usize {
        self.tools.len()
    }

    pub fn api_count(&self) -> usize {
        self.tools.iter().map(|t| t.file.api_list.len()).sum()
    }

    pub fn categories(&self) -> Vec<&str> {
        let mut c: Vec<&str> = self.tools.iter().map(|t| t.category.as_str()).collect();
        c.sort_unstable();
        c.dedup();
        c
    }

    /// Every API of the catalogue in query (`api_list`) form.
    pub fn api_docs(&self) -> impl Iterator<Item = (&Tool, ApiDoc)> {
        self.tools
            .iter()
            .flat_map(|t| t.file.api_list.iter().map(move |a| (t, t.api_doc(a))))
    }

    /// Finds a tool by category (folder name or original) and tool name (original or standardised).
    pub fn tool(&self, category: &str, tool_name: &str) -> Option<&Tool> {
        let std_name = standardize(tool_name);
        let folder = super::naming::standard_category(category);
        self.by_category
            .get(&(folder.clone(), std_name.clone()))
            .or_else(|| {
                self.by_category
                    .get(&(category.to_string(), std_name.clone()))
            })
            .or_else(|| self.by_name.get(&std_name).and_then(|v| v.first()))
            .or_else(|| self.by_name.get(tool_name).and_then(|v| v.first()))
            .map(|&i| &self.tools[i])
    }

    /// Finds an API of a tool by its original or standardised name.
    pub fn api<'a>(&'a self, tool: &'a Tool, api_name: &str) -> Option<&'a ToolApi> {
        let wanted = pure_api_name(api_name);
        tool.file
            .api_list
            .iter()
            .find(|a| a.name == api_name)
            .or_else(|| {
                tool.file
                    .api_list
                    .iter()
                    .find(|a| pure_api_name(&a.name) == wanted)
            })
    }

    /// Completes a query's API entry from the catalogue: minimal entries get their full doc.
    pub fn resolve(&self, doc: &ApiDoc) -> Option<ApiDoc> {
        if !doc.is_minimal() {
            return Some(doc.clone());
        }
        let tool = self.tool(&doc.category_name, &doc.tool_name)?;
        let api = self.api(tool, &doc.api_name)?;
        let mut full = tool.api_doc(api);
        full.category_name = doc.category_name.clone();
        full.tool_name = doc.tool_name.clone();
        Some(full)
    }

    /// The standard tool name ToolBench would use for `tool_name`: the file's base name when the tool is
    /// in the catalogue, else its standardised name.
    pub fn standard_tool_name(&self, category: &str, tool_name: &str) -> String {
        self.tool(category, tool_name)
            .map(|t| t.standard_name.clone())
            .unwrap_or_else(|| standardize(tool_name))
    }
}
