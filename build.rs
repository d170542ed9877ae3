//! Embeds every `prompts/*.md` template into the binary, so a copied binary still has its prompts.
use std::fmt::Write;
use std::path::Path;

fn main() {
    // Read at run time, not `env!` at the build script's compile time: a checkout moved or copied with its
    // target directory must embed its own prompts, not the ones where the build script was compiled.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let dir = Path::new(&manifest_dir).join("prompts");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::from("pub(crate) static EMBEDDED: &[(&str, &str)] = &[\n");
    for path in names {
        println!("cargo:rerun-if-changed={}", path.display());
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    ({stem:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("prompts.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        panic!("cannot write {}: {e}", dest.display());
    }
}
