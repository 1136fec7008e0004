"""Calibration data of the kind each trained model was trained for, made on this machine:
text lines and pages rendered with Pillow in the DejaVu fonts of Debian's fonts-dejavu-core
(PaddleOCR's recognizer, classifier and detector, the document-orientation classifier, the
captcha recognizer), and speech synthesized by espeak-ng (the silero voice activity detector).
Each generator writes `count` samples, one folder each, with one NAME.npy per model input,
the layout `aic-onnx opt --calib DIR` reads. A seed makes a set; calibration and held-out
sets use different seeds.

Preprocessing follows each model's own pipeline (PaddleOCR's resize-and-normalize, ddddocr's
grayscale at height 64, silero's 512-sample chunks with the recurrent state carried over).
"""
import glob
import os
import random
import shutil
import subprocess
import tempfile
import wave

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT_DIRS = ["/usr/share/fonts/truetype/dejavu"]

WORDS = ("the quick brown fox jumps over a lazy dog invoice total amount due date paid "
         "receipt order number customer address street city phone email price quantity "
         "tax subtotal shipping payment method account balance reference page chapter "
         "section figure table report summary results analysis model network layer value "
         "Monday Tuesday March April London Paris Berlin Tokyo OpenAI ONNX Runtime Linux").split()


def fonts():
    found = sorted(f for d in FONT_DIRS for f in glob.glob(os.path.join(d, "*.ttf")))
    if not found:
        raise SystemExit("no TrueType fonts in " + ", ".join(FONT_DIRS) +
                         " (apt-get install fonts-dejavu-core)")
    return found


def random_text(rng, min_words=1, max_words=5):
    words = []
    for _ in range(rng.randint(min_words, max_words)):
        r = rng.random()
        if r < 0.15:
            words.append(str(rng.randint(0, 99999)))
        elif r < 0.22:
            words.append(f"{rng.randint(1, 31):02d}/{rng.randint(1, 12):02d}/20{rng.randint(10, 29)}")
        else:
            w = rng.choice(WORDS)
            words.append(w.upper() if rng.random() < 0.1 else w.capitalize() if rng.random() < 0.3 else w)
    return " ".join(words)


def text_line_image(rng, font_files, height):
    """One line of dark text on a light background, tightly cropped, `height` pixels high."""
    font = ImageFont.truetype(rng.choice(font_files), rng.randint(28, 44))
    text = random_text(rng)
    left, top, right, bottom = font.getbbox(text)
    pad = rng.randint(4, 12)
    w, h = right - left + 2 * pad, bottom - top + 2 * pad
    bg = tuple(rng.randint(200, 255) for _ in range(3))
    fg = tuple(rng.randint(0, 80) for _ in range(3))
    img = Image.new("RGB", (w, h), bg)
    ImageDraw.Draw(img).text((pad - left, pad - top), text, font=font, fill=fg)
    if rng.random() < 0.5:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.2, 0.9)))
    scale = height / img.height
    return img.resize((max(1, int(round(img.width * scale))), height), Image.BILINEAR)


def paddle_line(img, width):
    """PaddleOCR's rec/cls preprocessing: height kept, width scaled into `width` and padded
    with zeros, (x/255 - 0.5)/0.5, CHW."""
    if img.width > width:
        img = img.resize((width, img.height), Image.BILINEAR)
    x = np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255.0
    x = (x - 0.5) / 0.5
    out = np.zeros((3, img.height, width), np.float32)
    out[:, :, : x.shape[2]] = x
    return out[None]


def page_image(rng, font_files, size, lines):
    """A light page with `lines` text lines at random places and sizes."""
    bg = tuple(rng.randint(215, 255) for _ in range(3))
    img = Image.new("RGB", (size, size), bg)
    draw = ImageDraw.Draw(img)
    y = rng.randint(5, 30)
    for _ in range(lines):
        font = ImageFont.truetype(rng.choice(font_files), rng.randint(14, 34))
        text = random_text(rng, 2, 7)
        x = rng.randint(5, size // 3)
        draw.text((x, y), text, font=font, fill=tuple(rng.randint(0, 90) for _ in range(3)))
        y += font.size + rng.randint(6, 30)
        if y > size - 20:
            break
    return img


def imagenet_chw(img):
    x = np.asarray(img, dtype=np.float32) / 255.0
    x = (x - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    return x.transpose(2, 0, 1)[None].astype(np.float32)


def save(folder, i, arrays):
    d = os.path.join(folder, f"sample_{i:03d}")
    os.makedirs(d, exist_ok=True)
    for name, a in arrays.items():
        np.save(os.path.join(d, name + ".npy"), a)


def ppocr_rec(folder, count, seed):
    rng = random.Random(seed)
    f = fonts()
    for i in range(count):
        save(folder, i, {"x": paddle_line(text_line_image(rng, f, 48), 320)})


def ppocr_cls(folder, count, seed):
    """Text lines at 48x192, every other one upside down (what the classifier tells apart)."""
    rng = random.Random(seed)
    f = fonts()
    for i in range(count):
        img = text_line_image(rng, f, 48)
        if i % 2:
            img = img.rotate(180)
        save(folder, i, {"x": paddle_line(img, 192)})


def ppocr_det(folder, count, seed):
    rng = random.Random(seed)
    f = fonts()
    for i in range(count):
        save(folder, i, {"x": imagenet_chw(page_image(rng, f, 640, rng.randint(6, 20)))})


def orientation(folder, count, seed):
    """Document crops at 224x224 turned by 0, 90, 180 or 270 degrees."""
    rng = random.Random(seed)
    f = fonts()
    for i in range(count):
        img = page_image(rng, f, 448, rng.randint(8, 18)).resize((224, 224), Image.BILINEAR)
        img = img.rotate(90 * (i % 4), expand=True)
        save(folder, i, {"x": imagenet_chw(img)})


def captcha(folder, count, seed):
    """ddddocr's input: a captcha-like word (4-6 letters and digits, jittered, with noise
    lines and dots) in grayscale at height 64, x/255 then (x - 0.5)/0.5, [1, 1, 64, W]."""
    rng = random.Random(seed)
    f = fonts()
    alphabet = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    for i in range(count):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(4, 6)))
        w, h = 40 * len(text) + 20, 64
        img = Image.new("RGB", (w, h), tuple(rng.randint(180, 255) for _ in range(3)))
        draw = ImageDraw.Draw(img)
        for k, ch in enumerate(text):
            font = ImageFont.truetype(rng.choice(f), rng.randint(34, 46))
            draw.text((10 + 40 * k + rng.randint(-4, 4), rng.randint(0, 10)), ch, font=font,
                      fill=tuple(rng.randint(0, 120) for _ in range(3)))
        for _ in range(rng.randint(2, 5)):
            draw.line([(rng.randint(0, w), rng.randint(0, h)), (rng.randint(0, w), rng.randint(0, h))],
                      fill=tuple(rng.randint(0, 200) for _ in range(3)), width=rng.randint(1, 2))
        for _ in range(rng.randint(30, 120)):
            x, y = rng.randint(0, w - 1), rng.randint(0, h - 1)
            img.putpixel((x, y), tuple(rng.randint(0, 255) for _ in range(3)))
        g = np.asarray(img.convert("L"), dtype=np.float32) / 255.0
        save(folder, i, {"input1": ((g - 0.5) / 0.5)[None, None].astype(np.float32)})


SENTENCES = [
    "The weather today is cloudy with a chance of rain in the afternoon.",
    "Please send the report to the team before the meeting on Monday.",
    "Voice activity detection finds the parts of a recording where someone speaks.",
    "Turn left at the next corner and keep walking until you reach the station.",
    "Numbers like four hundred and twenty seven are spoken slowly and clearly.",
    "She sells sea shells by the sea shore, and the shells she sells are surely sea shells.",
    "Can you hear me now? I will repeat the question once more.",
    "The quick brown fox jumps over the lazy dog near the river bank.",
]


def espeak_wave(text, voice, speed, pitch, path):
    if shutil.which("espeak-ng") is None:
        raise SystemExit("espeak-ng is not installed (apt-get install espeak-ng)")
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", path, text], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with wave.open(path) as w:
        rate = w.getframerate()
        data = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768.0
    # espeak-ng writes 22.05 kHz: resampled to the 16 kHz silero is given, linearly.
    n = int(len(data) * 16000 / rate)
    return np.interp(np.linspace(0, len(data) - 1, n), np.arange(len(data)), data).astype(np.float32)


def speech(model_path, folder, count, seed):
    """silero VAD samples: espeak-ng sentences (several voices, speeds, pitches) with pauses
    and low noise between them, cut into 512-sample chunks; the model runs over each clip in
    order (ONNX Runtime) so that every sample carries the recurrent state it would have there:
    inputs `input` [1, 512], `state` [2, 1, 128], `sr` (16000)."""
    import onnxruntime as ort
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    chunks = []
    with tempfile.TemporaryDirectory() as tmp:
        clip = 0
        while len(chunks) < count * 4:
            voice = rng.choice(["en", "en-us", "en-gb", "de", "fr", "es"])
            parts = [nrng.normal(0, 0.003, int(16000 * rng.uniform(0.2, 0.8))).astype(np.float32)]
            for _ in range(2):
                text = rng.choice(SENTENCES)
                parts.append(espeak_wave(text, voice, rng.randint(130, 190), rng.randint(30, 70),
                                         os.path.join(tmp, f"c{clip}.wav")) * rng.uniform(0.4, 1.0))
                parts.append(nrng.normal(0, 0.003, int(16000 * rng.uniform(0.2, 0.8))).astype(np.float32))
                clip += 1
            audio = np.concatenate(parts)
            state = np.zeros((2, 1, 128), np.float32)
            sr = np.array(16000, dtype=np.int64)
            for start in range(0, len(audio) - 512, 512):
                x = audio[start:start + 512][None].astype(np.float32)
                chunks.append((x, state.copy()))
                _, state = sess.run(None, {"input": x, "state": state, "sr": sr})
    # Every k-th chunk: speech, pauses and the transitions between them.
    step = max(1, len(chunks) // count)
    for i in range(count):
        x, state = chunks[(i * step + rng.randint(0, step - 1)) % len(chunks)]
        save(folder, i, {"input": x, "state": state, "sr": np.array(16000, dtype=np.int64)})
