"""Paste the search sections (docs/*.md) into README.md between the markers.

    python docs/build_readme.py
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "..", "README.md")
SECTIONS = ["bottom-up.md", "top-down.md", "genetic.md", "generate.md"]
BEGIN, END = "<!-- BEGIN search sections (docs/build_readme.py) -->", "<!-- END search sections -->"


def main() -> None:
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    body = "\n\n".join(open(os.path.join(HERE, name), encoding="utf-8").read().strip() for name in SECTIONS)
    block = f"{BEGIN}\n\n{body}\n\n{END}"
    if BEGIN in text:
        start, end = text.index(BEGIN), text.index(END) + len(END)
        text = text[:start] + block + text[end:]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    with open(README, "w", encoding="utf-8") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
