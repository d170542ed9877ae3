//! The agent methods by name: what `--method` accepts and what answer files and run manifests record
//! in their `method` field.

use crate::names::named_values;

/// A solver method. The aliases are the names of the papers' systems each one reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Method {
    /// Sum2Act: a router over a summarised state, with a checklist of the request's parts.
    #[default]
    Sum2act,
    /// ReAct chains (ToolBench's CoT@n).
    React,
    /// ToolBench's depth-first search-based decision tree.
    Dfsdt,
    /// Plan first, then execute (HuggingGPT-style).
    Plan,
    /// A search over a tool graph (ControlLLM-style).
    Graph,
}

named_values!(Method, "method" {
    Sum2act => "sum2act": "",
    React => "react" | "cot": "",
    Dfsdt => "dfsdt" | "dfs": "",
    Plan => "plan" | "hugginggpt": "",
    Graph => "graph" | "controlllm": "",
});

/// Written by name (`"sum2act"`), as the answer files' `method` field always was.
impl serde::Serialize for Method {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Method {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl Method {
    /// Every method once, in the order the docs present them.
    pub const ALL: [Method; 5] = [
        Method::Sum2act,
        Method::React,
        Method::Dfsdt,
        Method::Plan,
        Method::Graph,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_parse_by_name_and_alias_and_print_their_name() {
        for m in Method::ALL {
            assert_eq!(m.to_string().parse::<Method>(), Ok(m));
        }
        assert_eq!("cot".parse::<Method>(), Ok(Method::React));
        assert_eq!("controlllm".parse::<Method>(), Ok(Method::Graph));
        assert_eq!(Method::NAMES.len(), 9);
        assert!("DFSDT".parse::<Method>().is_err());
    }
}
