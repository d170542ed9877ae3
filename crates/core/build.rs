//! Embeds every `prompts/*.md` template into the binary, so a copied binary still has its prompts, and
//! names them: one `PromptName` variant per file, so a misspelt prompt name does not compile.
use std::fmt::Write;
use std::path::Path;

fn main() {
    // Read at run time, not `env!` at the build script's compile time: a checkout moved or copied with its
    // target directory must embed its own prompts, not the ones where the build script was compiled.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let dir = Path::new(&manifest_dir).join("../../prompts");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let stems: Vec<String> = names
        .iter()
        .map(|p| {
            p.file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let mut out = String::from("pub(crate) static EMBEDDED: &[(&str, &str)] = &[\n");
    for (path, stem) in names.iter().zip(&stems) {
        println!("cargo:rerun-if-changed={}", path.display());
        let _ = writeln!(
            out,
            "    ({stem:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");
    out.push_str(&prompt_names(&stems));
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("prompts.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        panic!("cannot write {}: {e}", dest.display());
    }
}

/// The `PromptName` enum: one variant per prompt file (`router_system.md` -> `RouterSystem`), with
/// `ALL` and `as_str` (the file's name).
fn prompt_names(stems: &[String]) -> String {
    let variant = |stem: &str| -> String {
        stem.split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect()
    };
    let mut out = String::from(
        "/// A prompt shipped in `prompts/`, by the name of its file (a misspelt name does not compile).\n\
         #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\n\
         pub enum PromptName {\n",
    );
    for stem in stems {
        let _ = writeln!(out, "    /// `prompts/{stem}.md`.\n    {},", variant(stem));
    }
    out.push_str("}\n\nimpl PromptName {\n    /// Every prompt, in file-name order.\n    pub const ALL: &[PromptName] = &[\n");
    for stem in stems {
        let _ = writeln!(out, "        PromptName::{},", variant(stem));
    }
    out.push_str("    ];\n\n    /// The file's name without `.md`.\n    pub const fn as_str(self) -> &'static str {\n        match self {\n");
    for stem in stems {
        let _ = writeln!(
            out,
            "            PromptName::{} => {stem:?},",
            variant(stem)
        );
    }
    out.push_str("        }\n    }\n}\n");
    out
}
