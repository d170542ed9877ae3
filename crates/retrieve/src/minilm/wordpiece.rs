//! BERT's uncased WordPiece tokenizer: clean and lower-case the text, strip accents, split on
//! whitespace and punctuation, then cut each word into the longest vocabulary pieces from the
//! left (continuations carry a `##` prefix). A word that cannot be cut becomes `[UNK]`.

use std::collections::HashMap;
use std::path::Path;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::super::RetrieveError;

/// Words longer than this (in characters) are `[UNK]`, as in BERT.
const MAX_WORD_CHARS: usize = 100;

pub struct WordPiece {
    ids: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
}

impl WordPiece {
    /// A `vocab.txt`: one token per line, its id the line number.
    pub fn load(path: &Path) -> Result<Self, RetrieveError> {
        let text = std::fs::read_to_string(path).map_err(|e| RetrieveError::io(path, e))?;
        Self::from_vocab(text.lines())
            .map_err(|e| RetrieveError::BadInput(format!("{}: {e}", path.display())))
    }

    pub fn from_vocab<'a>(lines: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let ids: HashMap<String, u32> = lines
            .into_iter()
            .enumerate()
            .map(|(i, t)| (t.trim_end_matches('\r').to_string(), i as u32))
            .collect();
        let special = |t: &str| {
            ids.get(t)
                .copied()
                .ok_or_else(|| format!("the vocabulary has no {t} token"))
        };
        Ok(WordPiece {
            unk: special("[UNK]")?,
            cls: special("[CLS]")?,
            sep: special("[SEP]")?,
            ids,
        })
    }

    pub fn vocab_size(&self) -> usize {
        self.ids.len()
    }

    /// `[CLS]` + the pieces of `text` + `[SEP]`, at most `max_len` ids in all.
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let mut out = vec![self.cls];
        let room = max_len.saturating_sub(2);
        for word in basic_words(text) {
            for id in self.pieces(&word) {
                if out.len() > room {
                    break;
                }
                out.push(id);
            }
        }
        out.push(self.sep);
        out
    }

    fn pieces(&self, word: &str) -> Vec<u32> {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > MAX_WORD_CHARS {
            return vec![self.unk];
        }
        let mut out = Vec::new();
        let mut start = 0;
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while start < end {
                let piece: String = chars[start..end].iter().collect();
                let key = if start > 0 {
                    format!("##{piece}")
                } else {
                    piece
                };
                if let Some(&id) = self.ids.get(&key) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => out.push(id),
                None => return vec![self.unk],
            }
            start = end;
        }
        out
    }
}

/// Lower-cased, accent-free words and single punctuation marks.
fn basic_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, words: &mut Vec<String>| {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
    };
    for c in text.nfd().filter(|c| !is_combining_mark(*c)) {
        if is_dropped(c) {
            continue;
        }
        if c.is_whitespace() {
            flush(&mut word, &mut words);
        } else if is_punctuation(c) || is_cjk(c) {
            flush(&mut word, &mut words);
            words.push(c.to_string());
        } else {
            word.extend(c.to_lowercase());
        }
    }
    flush(&mut word, &mut words);
    words
}

/// As BERT: every ASCII symbol (`$`, `^`, `` ` ``) and, beyond ASCII, Unicode punctuation (the
/// blocks that hold it) but not other symbols such as `´` or `≈`, which stay inside their word.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c as u32,
            0x00A1 | 0x00A7 | 0x00AB | 0x00B6 | 0x00B7 | 0x00BB | 0x00BF | 0x037E | 0x0387
            | 0x2010..=0x2027 | 0x2030..=0x2043 | 0x2045..=0x2051 | 0x2053..=0x205E
            | 0x2E00..=0x2E4F | 0x3001..=0x3003 | 0x3008..=0x3011 | 0x3014..=0x301F
            | 0xFE10..=0xFE19 | 0xFE30..=0xFE4F | 0xFF01..=0xFF03 | 0xFF05..=0xFF0A
            | 0xFF0C..=0xFF0F | 0xFF1A | 0xFF1B | 0xFF1F | 0xFF20 | 0xFF3B..=0xFF3D | 0xFF3F
            | 0xFF5B | 0xFF5D | 0xFF5F..=0xFF65)
}

/// Control and invisible format characters, which BERT drops.
fn is_dropped(c: char) -> bool {
    c == '\0'
        || c == '\u{fffd}'
        || (c.is_control() && !c.is_whitespace())
        || matches!(c as u32, 0x00AD | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0xFEFF)
}

/// CJK ideographs are split into single characters.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> WordPiece {
        let words = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "weather", "in", "paris", "un", "##aff",
            "##able", "cafe", "!", ",", "qr", "code", "-", "'", "s",
        ];
        WordPiece::from_vocab(words).unwrap()
    }

    #[test]
    fn splits_words_punctuation_and_pieces() {
        let v = vocab();
        assert_eq!(
            v.encode("The weather in PARIS!", 64),
            [2, 4, 5, 6, 7, 12, 3]
        );
        assert_eq!(v.encode("unaffable", 64), [2, 8, 9, 10, 3]);
        // Accents are stripped; an unknown word is one [UNK].
        assert_eq!(v.encode("Café zzz", 64), [2, 11, 1, 3]);
        assert_eq!(v.encode("qr-code's", 64), [2, 14, 16, 15, 17, 18, 3]);
        // Unicode punctuation splits; other symbols stay in the word (then unknown here).
        assert_eq!(v.encode("paris\u{2014}the", 64), [2, 7, 1, 4, 3]);
        assert_eq!(v.encode("paris´s", 64), [2, 1, 3]);
        assert_eq!(v.encode("pa\u{200b}ris", 64), [2, 7, 3]);
    }

    #[test]
    fn truncates_but_keeps_the_markers() {
        let v = vocab();
        assert_eq!(v.encode("the the the the", 4), [2, 4, 4, 3]);
        assert_eq!(v.encode("", 8), [2, 3]);
    }

    #[test]
    fn a_vocabulary_without_special_tokens_is_rejected() {
        let err = WordPiece::from_vocab(["a", "b"]).err().unwrap();
        assert!(err.contains("[UNK]"), "{err}");
    }
}
