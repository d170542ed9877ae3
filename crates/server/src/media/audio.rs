//! WAV files with `hound`: reading their header, mending the header of a WAV streamed to a pipe (its
//! sizes are placeholders), and converting to the 16 kHz mono 16-bit PCM speech recognisers expect.

use std::io::Cursor;

use super::error::MediaError;
use super::input::Loaded;

/// Longest audio converted for speech recognition (a voicemail's length; pocketsphinx takes a fair
/// fraction of real time, see docs/tools.md).
pub const MAX_STT_SECONDS: f64 = 60.0;
/// The sample rate speech recognisers expect.
pub const STT_RATE: u32 = 16_000;

/// What a WAV header says.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WavInfo {
    pub format: &'static str,
    pub sample_rate: u32,
    pub channels: u16,
    pub bits_per_sample: u16,
    pub sample_format: &'static str,
    pub frames: u32,
    pub duration_s: f64,
    pub bytes: usize,
}

/// The container a file's first bytes announce, for a clear message when it is not WAV.
pub fn sniff(bytes: &[u8]) -> &'static str {
    match bytes {
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'A',
            b'V',
            b'E',
            ..,
        ] => "WAV",
        [b'O', b'g', b'g', b'S', ..] => "Ogg",
        [b'f', b'L', b'a', b'C', ..] => "FLAC",
        [b'I', b'D', b'3', ..] | [0xFF, 0xE0..=0xFF, ..] => "MP3",
        [_, _, _, _, b'f', b't', b'y', b'p', ..] => "MP4/M4A",
        _ => "unknown",
    }
}

fn reader(input: &Loaded) -> Result<hound::WavReader<Cursor<&[u8]>>, MediaError> {
    let kind = sniff(&input.bytes);
    if kind != "WAV" {
        return Err(MediaError::format(
            &input.name,
            format!("only WAV audio is supported, this is {kind}"),
        ));
    }
    hound::WavReader::new(Cursor::new(input.bytes.as_slice()))
        .map_err(|e| MediaError::format(&input.name, e))
}

/// The WAV header of an input.
pub fn info(input: &Loaded) -> Result<WavInfo, MediaError> {
    let r = reader(input)?;
    let spec = r.spec();
    let frames = r.duration();
    Ok(WavInfo {
        format: "wav",
        sample_rate: spec.sample_rate,
        channels: spec.channels,
        bits_per_sample: spec.bits_per_sample,
        sample_format: match spec.sample_format {
            hound::SampleFormat::Int => "int",
            hound::SampleFormat::Float => "float",
        },
        frames,
        duration_s: round_ms(frames as f64 / spec.sample_rate.max(1) as f64),
        bytes: input.bytes.len(),
    })
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

/// A WAV written to a pipe (espeak-ng `--stdout`) carries placeholder sizes in its header, since the
/// writer could not seek back: set the RIFF and `data` sizes from the bytes actually there.
pub fn mend_streamed_header(bytes: &mut [u8]) {
    if sniff(bytes) != "WAV" {
        return;
    }
    let mut at = 12;
    while at + 8 <= bytes.len() {
        let size = u32::from_le_bytes([bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]])
            as usize;
        if &bytes[at..at + 4] == b"data" {
            let actual = bytes.len() - (at + 8);
            if size > actual {
                bytes[at + 4..at + 8].copy_from_slice(&(actual as u32).to_le_bytes());
                let riff = (bytes.len() - 8) as u32;
                bytes[4..8].copy_from_slice(&riff.to_le_bytes());
            }
            return;
        }
        at += 8 + size + (size & 1);
    }
}

/// The input as 16 kHz mono 16-bit PCM WAV (channels averaged, linear resampling).
pub fn to_speech_wav(input: &Loaded) -> Result<Vec<u8>, MediaError> {
    let mut r = reader(input)?;
    let spec = r.spec();
    let seconds = r.duration() as f64 / spec.sample_rate.max(1) as f64;
    if seconds > MAX_STT_SECONDS {
        return Err(MediaError::TooLarge {
            what: input.name.clone(),
            size: format!("{seconds:.0} s"),
            limit: format!("{MAX_STT_SECONDS:.0} s"),
        });
    }
    let bad = |e: hound::Error| MediaError::format(&input.name, e);
    let samples: Vec<f32> = match spec.sample_format {
        hound::SampleFormat::Float => r.samples::<f32>().collect::<Result<_, _>>().map_err(bad)?,
        hound::SampleFormat::Int => {
            let scale = 1.0 / (1u64 << (spec.bits_per_sample.clamp(1, 32) - 1)) as f32;
            r.samples::<i32>()
                .map(|s| s.map(|v| v as f32 * scale))
                .collect::<Result<_, _>>()
                .map_err(bad)?
        }
    };
    let mono = downmix(&samples, spec.channels.max(1) as usize);
    let resampled = resample(&mono, spec.sample_rate.max(1), STT_RATE);
    write_pcm16(&resampled, STT_RATE).map_err(bad)
}

fn downmix(samples: &[f32], channels: usize) -> Vec<f32> {
    samples
        .chunks(channels)
        .map(|frame| frame.iter().sum::<f32>() / frame.len() as f32)
        .collect()
}

/// Linear interpolation: enough for speech going down to 16 kHz.
fn resample(samples: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || samples.is_empty() {
        return samples.to_vec();
    }
    let n = (samples.len() as u64 * to as u64 / from as u64) as usize;
    let step = from as f64 / to as f64;
    (0..n)
        .map(|i| {
            let pos = i as f64 * step;
            let k = pos as usize;
            let frac = (pos - k as f64) as f32;
            let a = samples[k.min(samples.len() - 1)];
            let b = samples[(k + 1).min(samples.len() - 1)];
            a + (b - a) * frac
        })
        .collect()
}

fn write_pcm16(samples: &[f32], rate: u32) -> Result<Vec<u8>, hound::Error> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut out = Cursor::new(Vec::new());
    let mut w = hound::WavWriter::new(&mut out, spec)?;
    for s in samples {
        w.write_sample((s.clamp(-1.0, 1.0) * i16::MAX as f32) as i16)?;
    }
    w.finalize()?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(rate: u32, channels: u16, frames: usize) -> Vec<u8> {
        let spec = hound::WavSpec {
            channels,
            sample_rate: rate,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut out = Cursor::new(Vec::new());
        let mut w = hound::WavWriter::new(&mut out, spec).unwrap();
        for i in 0..frames * channels as usize {
            w.write_sample(((i as f32 * 0.05).sin() * 10_000.0) as i16)
                .unwrap();
        }
        w.finalize().unwrap();
        out.into_inner()
    }

    fn loaded(bytes: Vec<u8>) -> Loaded {
        Loaded {
            bytes,
            name: "a.wav".into(),
        }
    }

    #[test]
    fn info_reads_the_header() {
        let i = info(&loaded(tone(22_050, 2, 22_050 / 2))).unwrap();
        assert_eq!(
            (i.sample_rate, i.channels, i.bits_per_sample, i.frames),
            (22_050, 2, 16, 11_025)
        );
        assert_eq!(i.duration_s, 0.5);
        let e = info(&loaded(b"OggS and more bytes".to_vec())).unwrap_err();
        assert!(
            e.to_string()
                .contains("only WAV audio is supported, this is Ogg"),
            "{e}"
        );
    }

    #[test]
    fn a_streamed_header_is_mended() {
        let mut bytes = tone(22_050, 1, 1000);
        bytes[4..8].copy_from_slice(&0x7fff_f000u32.to_le_bytes());
        bytes[40..44].copy_from_slice(&0x7fff_f000u32.to_le_bytes());
        mend_streamed_header(&mut bytes);
        assert_eq!(info(&loaded(bytes)).unwrap().frames, 1000);
    }

    #[test]
    fn speech_wav_is_16k_mono() {
        let out = to_speech_wav(&loaded(tone(44_100, 2, 44_100))).unwrap();
        let i = info(&loaded(out)).unwrap();
        assert_eq!(
            (i.sample_rate, i.channels, i.bits_per_sample),
            (16_000, 1, 16)
        );
        assert!((i.duration_s - 1.0).abs() < 0.01, "{}", i.duration_s);
    }
}
