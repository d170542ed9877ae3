//! Speech both ways with Debian's programs: text to speech with espeak-ng (a WAV), and speech to text
//! with pocketsphinx and its US English model (`pocketsphinx-en-us`, a 24 MB package: the only small
//! offline recogniser a package registry ships here; accurate on clear speech, weak on synthetic voices).

use super::audio::{self, STT_RATE};
use super::error::MediaError;
use super::input::Loaded;
use super::process::{Program, safe_word};
use super::{Binary, MAX_BINARY_BYTES, Output};

const ESPEAK: Program = Program {
    name: "espeak-ng",
    package: "espeak-ng",
};
const POCKETSPHINX: Program = Program {
    name: "pocketsphinx_continuous",
    package: "pocketsphinx pocketsphinx-en-us",
};
/// Longest text spoken.
pub const MAX_TTS_CHARS: usize = 1000;
/// Largest transcript kept.
const MAX_TRANSCRIPT_BYTES: u64 = 64 * 1024;
/// Speaking rates espeak-ng takes, in words per minute.
pub const WPM_RANGE: std::ops::RangeInclusive<u32> = 80..=450;

/// Checks a voice name's characters (`en-us`, `fr`, `en+f3`).
pub fn check_voice(voice: &str) -> Result<&str, MediaError> {
    safe_word(
        "voice",
        voice,
        &['-', '_', '+'],
        "a voice name such as en-us, en-gb or fr",
    )
}

/// The voices and variants espeak-ng has, read once from `espeak-ng --voices` and
/// `--voices=variant`: espeak-ng itself speaks an unknown voice in its default one, exit status 0.
static VOICES: tokio::sync::OnceCell<Voices> = tokio::sync::OnceCell::const_new();

/// Names a voice may be given by (lower case): languages, voice names and files; and the variants
/// that may follow a `+`.
#[derive(Debug, Default)]
struct Voices {
    voices: std::collections::BTreeSet<String>,
    variants: std::collections::BTreeSet<String>,
}

impl Voices {
    async fn load() -> Result<Voices, MediaError> {
        let mut found = Voices::default();
        for (arg, set) in [
            ("--voices", &mut found.voices),
            ("--voices=variant", &mut found.variants),
        ] {
            let listing = ESPEAK.run(&[arg], Vec::new(), 1024 * 1024).await?;
            set.extend(voice_names(&String::from_utf8_lossy(&listing)));
        }
        Ok(found)
    }

    /// `voice` (checked by [`check_voice`]) is `VOICE` or `VOICE+VARIANT` of this espeak-ng.
    fn check(&self, voice: &str) -> Result<(), MediaError> {
        let lower = voice.to_ascii_lowercase();
        let (base, variant) = match lower.split_once('+') {
            Some((b, v)) => (b, Some(v)),
            None => (lower.as_str(), None),
        };
        if !self.voices.contains(base) {
            return Err(MediaError::argument(
                "voice",
                format!(
                    "`{voice}` is not a voice of espeak-ng (e.g. en-us, en-gb, fr, de; `espeak-ng --voices` lists its {})",
                    self.voices.len()
                ),
            ));
        }
        if let Some(v) = variant.filter(|v| !self.variants.contains(*v)) {
            return Err(MediaError::argument(
                "voice",
                format!(
                    "`{v}` in `{voice}` is not a variant of espeak-ng (e.g. f3, m2; `espeak-ng --voices=variant` lists them)"
                ),
            ));
        }
        Ok(())
    }
}

/// The names in an `espeak-ng --voices` listing: each row's language, voice name, file and the file's
/// last part (`gmw/en-US` is also `en-us`; a variant's `!v/f3` is `f3`) and its other languages,
/// lower case.
fn voice_names(listing: &str) -> Vec<String> {
    let mut names = Vec::new();
    for row in listing.lines().skip(1) {
        let cols: Vec<&str> = row.split_whitespace().collect();
        let [_, language, _, name, file, others @ ..] = cols.as_slice() else {
            continue;
        };
        let last = file.rsplit('/').next().unwrap_or(file);
        // "Other languages" are `(en 3)`: a language and its priority.
        let other = others.iter().filter_map(|o| o.strip_prefix('('));
        for n in [*language, *name, *file, last].into_iter().chain(other) {
            names.push(n.to_ascii_lowercase());
        }
    }
    names
}

/// Speaks `text` with espeak-ng as a WAV.
pub async fn text_to_speech(
    text: &str,
    voice: &str,
    words_per_minute: u32,
) -> Result<Output, MediaError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(MediaError::argument("text", "is empty"));
    }
    if text.chars().count() > MAX_TTS_CHARS {
        return Err(MediaError::argument(
            "text",
            format!("is over the limit of {MAX_TTS_CHARS} characters"),
        ));
    }
    if !WPM_RANGE.contains(&words_per_minute) {
        return Err(MediaError::argument(
            "words_per_minute",
            format!("must be {} to {}", WPM_RANGE.start(), WPM_RANGE.end()),
        ));
    }
    let voice = check_voice(voice)?;
    VOICES.get_or_try_init(Voices::load).await?.check(voice)?;
    let speed = words_per_minute.to_string();
    let args = ["--stdout", "--stdin", "-b", "1", "-v", voice, "-s", &speed];
    let mut wav = ESPEAK
        .run(&args, text.as_bytes().to_vec(), MAX_BINARY_BYTES)
        .await?;
    audio::mend_streamed_header(&mut wav);
    let loaded = Loaded {
        bytes: wav,
        name: "espeak-ng's output".into(),
    };
    let described = audio::info(&loaded)?;
    if described.frames == 0 {
        return Err(MediaError::Program {
            program: ESPEAK.name,
            message: "wrote no audio".into(),
        });
    }
    let summary = serde_json::json!({
        "format": "wav",
        "voice": voice,
        "duration_s": described.duration_s,
        "sample_rate": described.sample_rate,
        "bytes": described.bytes,
    });
    Ok(Output {
        summary,
        binary: Some(Binary::audio("audio/wav", loaded.bytes)),
    })
}

/// Transcribes a WAV with pocketsphinx's US English model.
pub async fn speech_to_text(input: &Loaded) -> Result<Output, MediaError> {
    let wav = audio::to_speech_wav(input)?;
    let args = [
        "-infile",
        "/dev/stdin",
        "-logfn",
        "/dev/null",
        "-samprate",
        "16000",
    ];
    debug_assert_eq!(STT_RATE, 16_000);
    let out = POCKETSPHINX.run(&args, wav, MAX_TRANSCRIPT_BYTES).await?;
    let text = String::from_utf8_lossy(&out)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if text.is_empty() {
        return Err(MediaError::NotFound(
            "no speech recognised in the audio".into(),
        ));
    }
    Ok(Output {
        summary: serde_json::json!({ "text": text, "model": "pocketsphinx en-us" }),
        binary: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voices_are_checked_against_the_listing() {
        let voices = Voices {
            voices: voice_names(
                "Pty Language       Age/Gender VoiceName          File                 Other Languages\n 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)\n 5  fr-fr           --/M      French             roa/fr               (fr 5)\n",
            )
            .into_iter()
            .collect(),
            variants: voice_names(
                "Pty Language       Age/Gender VoiceName          File                 Other Languages\n 5  variant         --/F      female3            !v/f3\n",
            )
            .into_iter()
            .collect(),
        };
        for ok in ["en-us", "EN-US", "fr", "french", "en-us+f3"] {
            assert!(voices.check(ok).is_ok(), "{ok}");
        }
        let e = voices.check("klingon").unwrap_err().to_string();
        assert!(e.contains("`klingon` is not a voice of espeak-ng"), "{e}");
        let e = voices.check("en-us+zz").unwrap_err().to_string();
        assert!(e.contains("`zz` in `en-us+zz` is not a variant"), "{e}");
    }
}
