"""Cover art that stores accept: checked at export, made square on request.

Why at export and not at import: the EPUB's cover is usually a portrait book
jacket (2100 x 2756, say), while audiobook stores (ACX, Apple, Google) want a
square RGB JPEG or PNG of at least 2400 px, under a size limit. A file delivered
with a portrait cover is rejected days later; so the export measures the image,
says plainly what is wrong, and -- when the producer asks with ``pad`` or
``crop`` -- makes a conforming square itself (Pillow).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from studio.audio.tags import Cover
from studio.core.errors import StudioError

#: The smallest side stores accept, in pixels (ACX: 2400 x 2400).
MIN_SIDE = 2400
#: The largest cover file stores take without complaint (bytes).
MAX_BYTES = 10 * 1024 * 1024
FITS = ("pad", "crop")


@dataclass(frozen=True)
class CoverReport:
    """What the export found and did: the delivered cover's size, the original's,
    the fit applied (None: as it was) and the warnings for the producer."""

    width: int
    height: int
    original: tuple[int, int]
    fit: str | None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"width": self.width, "height": self.height, "original": list(self.original), "fit": self.fit,
                "warnings": list(self.warnings)}

    def line(self) -> str:
        """One line for the export's report."""
        w0, h0 = self.original
        done = f"{self.fit}ded" if self.fit == "pad" else f"{self.fit}ped" if self.fit else "as it is"
        what = f"{w0} x {h0}" + (f" -> {self.width} x {self.height} ({done})" if self.fit else f" ({done})")
        return f"cover {what}" + ("; " + "; ".join(self.warnings) if self.warnings else "")


def _open(cover: Cover):  # -> PIL.Image.Image
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(cover.data))
        image.load()
    except (UnidentifiedImageError, OSError) as err:
        raise StudioError(f"the cover image cannot be read: {err}") from err
    return image


def _problems(width: int, height: int, mode: str, size: int) -> list[str]:
    found = []
    if width != height:
        found.append(f"not square ({width} x {height})")
    if min(width, height) < MIN_SIDE:
        found.append(f"below {MIN_SIDE} px")
    if mode != "RGB":
        found.append(f"colour mode {mode}, not RGB")
    if size > MAX_BYTES:
        found.append(f"{size / 1e6:.1f} MB, over the {MAX_BYTES // (1024 * 1024)} MB stores take")
    return found


def _border_colour(image) -> tuple[int, int, int]:  # image: PIL.Image.Image (RGB)
    """The mean colour of the image's outer pixels: padding in it reads as a frame."""
    from PIL import ImageStat

    w, h = image.size
    edges = [image.crop(box) for box in ((0, 0, w, 1), (0, h - 1, w, h), (0, 0, 1, h), (w - 1, 0, w, h))]
    means = [ImageStat.Stat(e).mean for e in edges]
    return tuple(int(round(sum(m[i] for m in means) / len(means))) for i in range(3))  # type: ignore[return-value]


def fit_cover(cover: Cover, fit: str | None = None) -> tuple[Cover, CoverReport]:
    """Check ``cover``; with ``fit`` "pad" (a square canvas of the longer side in the
    border's colour) or "crop" (the centred square of the shorter side) make it square,
    RGB and a JPEG. Never scaled up: a result below 2400 px carries a warning."""
    if fit is not None and fit not in FITS:
        raise StudioError(f"unknown cover fit '{fit}' (choose pad or crop)")
    image = _open(cover)
    w, h = image.size
    if fit is None:
        problems = _problems(w, h, image.mode, len(cover.data))
        warnings = [f"the cover is {', '.join(problems)}; stores want a square RGB JPEG or PNG of at least "
                    f"{MIN_SIDE} px (use --cover-fit pad or crop, or a better image)"] if problems else []
        return cover, CoverReport(w, h, (w, h), None, tuple(warnings))
    from PIL import Image

    rgb = image.convert("RGB")
    if fit == "pad":
        side = max(w, h)
        out = Image.new("RGB", (side, side), _border_colour(rgb))
        out.paste(rgb, ((side - w) // 2, (side - h) // 2))
    else:
        side = min(w, h)
        left, top = (w - side) // 2, (h - side) // 2
        out = rgb.crop((left, top, left + side, top + side))
    buf = io.BytesIO()
    out.save(buf, format="JPEG", quality=92, optimize=True)
    made = Cover(buf.getvalue(), "image/jpeg")
    problems = _problems(side, side, "RGB", len(made.data))
    warnings = [f"the {fit}ded cover is {', '.join(problems)}" if fit == "pad" else
                f"the cropped cover is {', '.join(problems)}"] if problems else []
    if problems and side < MIN_SIDE:
        warnings[0] += f"; stores want at least {MIN_SIDE} px: use a larger image"
    return made, CoverReport(side, side, (w, h), fit, tuple(warnings))


__all__ = ["FITS", "MAX_BYTES", "MIN_SIDE", "CoverReport", "fit_cover"]
