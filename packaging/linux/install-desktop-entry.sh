#!/bin/sh
# Add this unpacked ORTune to your desktop for your user: the application menu entry, its
# icon, and .onnx / .ort files opening in ORTune on a double click.
#   ./install-desktop-entry.sh            add (again, after moving this folder)
#   ./install-desktop-entry.sh --remove   take it away
set -eu
here=$(cd "$(dirname "$0")" && pwd)
resources="$here/_internal/resources"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
icons="$data/icons/hicolor"

if [ "${1:-}" = "--remove" ]; then
    rm -f "$data/applications/ortune.desktop" "$data/mime/packages/ortune.xml" "$icons"/*/apps/ortune.png \
        "$icons/scalable/apps/ortune.svg"
    result="removed"
else
    mkdir -p "$data/applications" "$data/mime/packages" "$icons/scalable/apps"
    # The menu entry starts this copy by its full path (quoted: it may hold spaces).
    sed "s|^Exec=ortune |Exec=\"$here/ortune\" |" "$resources/ortune.desktop" > "$data/applications/ortune.desktop"
    cp "$resources/ortune-mime.xml" "$data/mime/packages/ortune.xml"
    cp -R "$resources/icons/hicolor/." "$icons/"
    cp "$resources/icons/ortune.svg" "$icons/scalable/apps/ortune.svg"
    result="added for $here/ortune"
fi
if command -v update-mime-database >/dev/null 2>&1; then update-mime-database "$data/mime"; fi
if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database "$data/applications"; fi
if command -v gtk-update-icon-cache >/dev/null 2>&1; then gtk-update-icon-cache -q -t "$icons" || true; fi
echo "ORTune desktop entry $result"
