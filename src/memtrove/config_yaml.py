"""Reading ``config.yaml`` safely: YAML's safe subset, with what a hand-written file must
never do refused in one line.

- **A key twice in one mapping** (two collections named ``demo``): plain YAML keeps the last
  one without a word, so a second ``demo:`` silently replaced the first folder.
- **Aliases that multiply**: anchors and aliases are allowed (one ``exclude`` list shared by
  several collections), but a document whose values, with every alias followed, would
  number more than :data:`MAX_VALUES` is refused before any value is built. Nested aliases
  ("billion laughs") otherwise cost gigabytes to walk or to quote in an error.
- **Nesting deeper than Python recurses**: a RecursionError is a one-line ValueError.

Merge keys (``<<: *defaults``) keep their meaning: the keys a mapping writes itself win
over the merged ones, and only its own keys count as duplicates.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, SequenceNode

__all__ = ["MAX_VALUES", "load_config_yaml"]

MAX_VALUES = 100_000
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _ConfigLoader(yaml.SafeLoader):
    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                repeated = key in seen
            except TypeError:  # an unhashable key: the base constructor says so
                continue
            if repeated:
                raise ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"found the key {str(key)[:80]!r} twice",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _values(node: Node, sizes: dict[int, int]) -> int:
    """How many values ``node`` stands for with every alias followed (each shared node is
    counted once per use, and measured once)."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    sizes[id(node)] = 1  # a node that contains itself counts once
    total = 1
    if isinstance(node, SequenceNode):
        for child in node.value:
            total += _values(child, sizes)
    elif isinstance(node, MappingNode):
        for key, value in node.value:
            total += _values(key, sizes) + _values(value, sizes)
    sizes[id(node)] = total
    return total


def load_config_yaml(text: str) -> Any:
    """The value ``text`` holds (None for an empty document). Raises yaml.YAMLError for
    text that is not YAML or breaks a rule above, ValueError for nesting too deep."""
    loader = _ConfigLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _values(node, {}) > MAX_VALUES:
            raise ConstructorError(
                None,
                None,
                f"its aliases expand to more than {MAX_VALUES:,} values",
                node.start_mark,
            )
        return loader.construct_document(node)
    except RecursionError:
        raise ValueError("it is nested too deeply") from None
    finally:
        loader.dispose()
