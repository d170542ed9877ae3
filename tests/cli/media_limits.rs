//! Issue 42 item 11: the media tools keep their documented limits. An image's size is read from its
//! header before anything is decoded: `image_info` describes any size, rotate and grayscale (whose
//! output has the input's size) refuse inputs over the 4,096-pixel output limit, and the refusal names
//! the numbers. A voice espeak-ng does not have is refused, naming it.

use base64::Engine;
use serde_json::json;

use crate::common::mcp::{McpChild, installed, json};

/// A `data:` URL of a PNG that is only a header saying `w`×`h` RGBA and 4 bytes of pixel data that
/// do not inflate: decoding it would fail, so a refusal that names its size read only the header.
fn png_header(w: u32, h: u32) -> String {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let body: Vec<u8> = kind.iter().chain(data).copied().collect();
        out.extend(&body);
        out.extend(crc32(&body).to_be_bytes());
    }
    let mut png = Vec::from(*b"\x89PNG\r\n\x1a\n");
    let mut ihdr = Vec::new();
    ihdr.extend(w.to_be_bytes());
    ihdr.extend(h.to_be_bytes());
    ihdr.extend([8, 6, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &[0xff; 4]);
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    format!("data:image/png;base64,{data}")
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[tokio::test(flavor = "multi_thread")]
async fn image_sizes_are_checked_from_the_header_and_named() {
    let media = McpChild::spawn(&["media-server", "--offline"], &[]).await;
    let big = png_header(9000, 8000);
    let info = json(&media.ok("image_info", json!({ "image": big })).await);
    assert_eq!(
        (info["width"].clone(), info["height"].clone()),
        (json!(9000), json!(8000))
    );
    let huge = png_header(20000, 20000);
    let info = json(&media.ok("image_info", json!({ "image": huge })).await);
    assert_eq!(info["width"], json!(20000));
    for tool in ["image_rotate", "image_grayscale"] {
        let e = media
            .err(tool, json!({ "image": big, "degrees": 90 }))
            .await;
        assert!(
            e.contains("9000×8000 pixels") && e.contains("limit of 4096 pixels a side"),
            "{tool}: {e}"
        );
    }
    // Within the input limit but too large decoded (9000 × 8000 RGBA is 275 MiB).
    let e = media
        .err("image_resize", json!({ "image": big, "width": 100 }))
        .await;
    assert!(
        e.contains("274.7 MiB decoded") && e.contains("128.0 MiB"),
        "{e}"
    );
    media.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_voice_is_refused_by_name() {
    if !installed("espeak-ng") {
        return;
    }
    let media = McpChild::spawn(&["media-server", "--offline"], &[]).await;
    let e = media
        .err(
            "text_to_speech",
            json!({ "text": "hello", "voice": "vulcan" }),
        )
        .await;
    assert!(e.contains("`vulcan` is not a voice of espeak-ng"), "{e}");
    let ok = json(
        &media
            .ok(
                "text_to_speech",
                json!({ "text": "hello", "voice": "en-gb" }),
            )
            .await,
    );
    assert_eq!(ok["voice"], "en-gb");
    media.close().await;
}
