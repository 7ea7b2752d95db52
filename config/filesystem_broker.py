"""kombu's filesystem transport with messages that appear whole (the broker of `make run`).

kombu writes a message in place: it creates `<time>_<uuid>.<queue>.msg` and then writes its bytes.
A worker polling the folder can move and read the file in between, find it empty, and end on a
JSONDecodeError ("Unrecoverable error"); `make run` then stops the whole stack, as it does for
any crash. Here a message is written under a name no reader takes (it does not end in
`.<queue>.msg`) and renamed into place once complete: a rename within one folder is atomic, so
a reader sees the whole message or none of it.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

# A file being written is `partial-<uuid>.<queue>.msg.part`: kombu's reader takes the files
# whose name after the first dot is `<queue>.msg`, and this one's never is.
PARTIAL_SUFFIX = ".part"


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: dict, **kwargs: object) -> None:
        """Put `payload` onto `queue`, visible to readers only once fully written."""
        unique = uuid.uuid4()
        name = f"{round(monotonic() * 1000)}_{unique}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(
            self.data_folder_out, f"partial-{unique}.{queue}.msg{PARTIAL_SUFFIX}"
        )
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.remove(partial)
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
