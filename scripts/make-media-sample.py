#!/usr/bin/env python3
"""Makes the mixed task set's media files (toolbench/sample/url_cache) with our own media server.

Every image and audio file that the mixed set's sample APIs point to (QR codes, shipping labels, webcam
snapshots, scanned documents, menus, dish photos, voicemails) is made here by `sum2act media-server`
itself (qr_encode, image_draw_text, image_rotate, image_convert, text_to_speech), driven over MCP on
stdio with plain JSON-RPC, so the files are reproducible from this list. Backgrounds are gradients
written by the standard library. Needs a built binary (`cargo build`), espeak-ng and the font
(scripts/setup.sh). Usage: scripts/make-media-sample.py [path/to/sum2act]
"""
import base64
import json
import os
import struct
import subprocess
import sys
import wave
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CACHE = os.path.join(ROOT, "toolbench", "sample", "url_cache")


class Media:
    """A `sum2act media-server` child spoken to over MCP (newline-delimited JSON-RPC)."""

    def __init__(self, binary):
        self.proc = subprocess.Popen([binary, "media-server", "--offline"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "make-media-sample", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def call(self, tool, **arguments):
        """Runs a tool; returns (summary JSON, binary bytes or None)."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        texts = [c["text"] for c in result["content"] if c["type"] == "text"]
        if result.get("isError"):
            raise RuntimeError(f"{tool}: {texts}")
        data = [c["data"] for c in result["content"] if c["type"] in ("image", "audio")]
        return json.loads(texts[0]), (base64.b64decode(data[0]) if data else None)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def data_url(png):
    return "data:image/png;base64," + base64.b64encode(png).decode()


def gradient_png(width, height, top, bottom):
    """A vertical colour gradient as a PNG, written with zlib alone."""
    rows = []
    for y in range(height):
        t = y / max(1, height - 1)
        pixel = bytes(round(a + (b - a) * t) for a, b in zip(top, bottom))
        rows.append(b"\x00" + pixel * width)
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b""))


def telephone_quality(wav_bytes):
    """espeak-ng's 22,050 Hz 16-bit WAV as 8,000 Hz 8-bit (a voicemail's quality, a fifth of the size)."""
    import io
    src = wave.open(io.BytesIO(wav_bytes))
    rate = src.getframerate()
    samples = struct.unpack(f"<{src.getnframes()}h", src.readframes(src.getnframes()))
    count = len(samples) * 8000 // rate
    picked = [samples[min(len(samples) - 1, round(i * rate / 8000))] for i in range(count)]
    out = io.BytesIO()
    dst = wave.open(out, "wb")
    dst.setnchannels(1)
    dst.setsampwidth(1)
    dst.setframerate(8000)
    dst.writeframes(bytes((s >> 8) + 128 for s in picked))
    dst.close()
    return out.getvalue()


def write(url_path, data):
    path = os.path.join(CACHE, url_path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    print(f"{len(data):>7} B  {url_path}")


# QR codes: (file under url_cache, encoded text).
QR_CODES = [
    ("files.qrforge.example/codes/qrf-1a2b3c.png", "https://lisboa-bistro.example/menu"),
    ("files.qrforge.example/codes/qrf-4d5e6f.png", "WIFI:S:CasaAzul-Guest;T:WPA;P:sardinha2024;;"),
    ("files.qrforge.example/codes/qrf-7a8b9c.png", "Meet at Cais do Sodre, 18:30"),
    ("files.qrforge.example/codes/qrf-20f1e9.png", "https://pay.example/i/INV-2024-0315"),
    ("tickets.tickethub.example/qr/TKT-48213.png", "TKT-48213;GATE=C7;ENTRY=20:45"),
    ("tickets.tickethub.example/qr/TKT-50977.png", "TKT-50977;GATE=A2;ENTRY=19:30"),
    ("labels.parceltrace.example/PT7781XK-return.png", "https://returns.parceltrace.example/r/PT7781XK"),
]

# Text on white paper: (file, text, font size, clockwise turn of the scan).
DOCUMENTS = [
    ("labels.parceltrace.example/PT7781XK.png",
     "SHIP TO:\nAna Ribeiro\nRua das Flores 28\n4050-262 Porto\nPORTUGAL\nWeight 2.4 kg", 34, 0),
    ("labels.parceltrace.example/PT9042MZ.png",
     "SHIP TO:\nJavier Ortega\nCalle de Alcala 117\n28009 Madrid\nSPAIN\nWeight 0.8 kg", 34, 0),
    ("scans.docuvault.example/INV-2024-0315/page-1.png",
     "INVOICE INV-2024-0315\nAtlantic Print Co.\n500 flyers 212.00 EUR\nVAT 23% 48.76 EUR\nTOTAL 260.76 EUR\nDue 2024-07-15", 30, 0),
    ("scans.docuvault.example/RCP-7731/page-1.png",
     "CAFE GIRASSOL\nEspresso 1.20\nPastel de nata 1.60\nTOTAL 2.80 EUR", 32, 90),
    ("scans.docuvault.example/LTR-0042/page-1.png",
     "Dear Ms Silva,\nyour appointment is on 2024-06-20 at 09:30\nat Clinica Sol, Avenida da Liberdade 120.\nPlease bring your health card.", 26, 0),
    ("menus.menuboard.example/tasca-do-chico/today.png",
     "TASCA DO CHICO - MENU\nCaldo verde 4.50\nGrilled sardines 12.00\nBacalhau a bras 14.50\nPastel de nata 1.80", 32, 0),
]

# Photos: (file, width, height, top colour, bottom colour, sign text or None, text colour).
PHOTOS = [
    ("cdn.citycam.example/snapshots/lis-comercio-01.jpg", 640, 360, (150, 190, 235), (235, 225, 200),
     "MUSEU DE LISBOA\nOPEN 10:00 - 18:00\nCLOSED MONDAYS", "#1a1a1a"),
    ("cdn.citycam.example/snapshots/lis-tram28-02.jpg", 640, 360, (170, 200, 230), (240, 235, 220),
     "TRAM 28 MARTIM MONIZ\nNEXT TRAM 6 MIN", "#1a1a1a"),
    ("cdn.citycam.example/snapshots/opo-saobento-01.jpg", 640, 360, (240, 240, 235), (210, 215, 220),
     "10:15 BRAGA PLATFORM 3\n10:40 AVEIRO PLATFORM 5\n11:05 GUIMARAES PLATFORM 2", "#102040"),
    ("pod.parceltrace.example/PT7781XK.jpg", 640, 360, (205, 180, 150), (245, 240, 230),
     "Left with neighbour at No. 30", "#202020"),
    ("img.dishgallery.example/photos/smoky-chickpea-stew.jpg", 640, 427, (200, 120, 60), (120, 60, 30), None, None),
    ("img.dishgallery.example/photos/red-lentil-dal.jpg", 600, 400, (235, 160, 60), (180, 90, 30), None, None),
]

# Voicemails: (file, spoken text).
VOICEMAILS = [
    ("media.voicemailbox.example/VM-2207.wav", "Hi Ana, this is Marta from Lisboa Bistro. Your table for two is confirmed for eight p m tonight."),
    ("media.voicemailbox.example/VM-2208.wav", "Hello, your parcel could not be delivered today. We will try again tomorrow morning."),
]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "debug", "sum2act")
    media = Media(binary)
    for path, text in QR_CODES:
        write(path, media.call("qr_encode", text=text, module_pixels=6)[1])
    for path, text, size, turn in DOCUMENTS:
        _, png = media.call("image_draw_text", text=text, size=size, x=24, y=24)
        _, png = media.call("image_grayscale", image=data_url(png))
        if turn:
            _, png = media.call("image_rotate", image=data_url(png), degrees=turn)
        write(path, png)
    for path, width, height, top, bottom, sign, colour in PHOTOS:
        png = gradient_png(width, height, top, bottom)
        if sign:
            _, png = media.call("image_draw_text", image=data_url(png), text=sign, size=34, x=40, y=60, color=colour)
        write(path, media.call("image_convert", image=data_url(png), format="jpeg")[1])
    for path, text in VOICEMAILS:
        write(path, telephone_quality(media.call("text_to_speech", text=text, words_per_minute=150)[1]))
    media.close()


if __name__ == "__main__":
    main()
