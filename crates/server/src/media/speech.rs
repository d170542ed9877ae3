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

/// Checks a voice name (`en-us`, `fr`, `en+f3`).
pub fn check_voice(voice: &str) -> Result<&str, MediaError> {
    safe_word(
        "voice",
        voice,
        &['-', '_', '+'],
        "a voice name such as en-us, en-gb or fr",
    )
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
