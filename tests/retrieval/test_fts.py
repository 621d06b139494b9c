from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtrove import Vault
from memtrove.db.connection import Connection, open_connection
from memtrove.db.sqlite.text_index import build_match
from memtrove.retrieval.filters import Filters
from memtrove.retrieval.fts import (
    MAX_QUERY_CHARS,
    MAX_TERMS,
    ParsedQuery,
    normalize_bm25,
    parse_query,
    search_fts,
)
from tests.conftest import write

NOTES = {
    "sqlite.md": "# SQLite storage\n\nWe use SQLite with FTS5 for search. The database keeps "
    "every body once.\n",
    "postgres.md": "# Postgres server\n\nPostgres is a database server, not an embedded one.\n",
    "fox.md": "# Pangram\n\nThe quick brown fox jumps over the lazy dog.\n",
    "chinese.md": "# 笔记\n\n我们使用数据库来存储笔记。\n",
    "japanese.md": "# メモ\n\n東京で会議をしました。\n",
    "stop.md": "# Words\n\nto be or not to be\n",
    "emoji.md": '# Party\n\nparty 🎉 time with "quotes" and (parens) and a:colon\n',
    "decisions/queue.md": "---\ntype: decision\n---\n# Queue choice\n\nWe chose Redis.\n",
}


@pytest.fixture(scope="module")
def search_vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    root = tmp_path_factory.mktemp("fts")
    folder = root / "notes"
    for relative, text in NOTES.items():
        write(folder, relative, text)
    vault = Vault.open(root / "v.sqlite", config_dir=root / "cfg")
    vault.add_collection(folder, name="notes")
    report = vault.update()
    assert report is not None
    yield vault
    vault.close()


@pytest.fixture(scope="module")
def connection(search_vault: Vault) -> Iterator[Connection]:
    opened = open_connection(Path(search_vault.path))
    yield opened
    opened.close()


def found(vault: Vault, query: str) -> set[str]:
    return {result.path for result in vault.search(query, limit=50)}


def fts_paths(connection: Connection, query: str | ParsedQuery, **filters: Any) -> set[str]:
    hits = search_fts(connection, query, limit=50, filters=Filters(**filters))
    ids = [hit.doc_id for hit in hits]
    if not ids:
        return set()
    rows = connection.execute(
        f"SELECT path FROM documents WHERE id IN ({','.join('?' * len(ids))})", ids
    ).fetchall()
    return {row[0] for row in rows}


# -- parse_query ------------------------------------------------------------------------------


def test_terms_are_lowercased_deduplicated_and_stopwords_dropped() -> None:
    parsed = parse_query("How do I use SQLite with the SQLite FTS5 index?")
    assert parsed.terms == ("use", "sqlite", "fts5", "index")
    assert parsed.phrases == parsed.prefixes == parsed.excluded == ()
    assert not parsed.empty


def test_a_query_of_only_stopwords_still_searches_for_them() -> None:
    parsed = parse_query("to be or not to be")
    assert parsed.terms == ("to", "be", "or", "not")


def test_stopwords_are_kept_out_when_a_phrase_or_prefix_carries_the_query() -> None:
    assert parse_query('the "brown fox"').terms == ()
    assert parse_query("the datab*").terms == ()


def test_quoted_phrases_are_required_and_normalized() -> None:
    parsed = parse_query('"Brown  FOX" sqlite "the lazy-dog"')
    assert parsed.phrases == ("brown fox", "the lazy dog")
    assert parsed.terms == ("sqlite",)
    assert build_match(parsed) == (
        '"brown fox" AND "the lazy dog" AND ("brown fox" OR "the lazy dog" OR "sqlite")'
    )


def test_empty_or_symbol_only_phrase_is_dropped() -> None:
    assert parse_query('"" "!!!" word').phrases == ()
    assert parse_query('""').empty


def test_unbalanced_quote_is_a_separator() -> None:
    parsed = parse_query('unbalanced "quote here')
    assert parsed.phrases == ()
    assert parsed.terms == ("unbalanced", "quote")
    parsed = parse_query('"one" two "three')
    assert parsed.phrases == ("one",)
    assert parsed.terms == ("two", "three")


def test_minus_word_is_excluded() -> None:
    parsed = parse_query("sqlite -postgres --mysql")
    assert parsed.terms == ("sqlite",)
    assert parsed.excluded == ("postgres", "mysql")
    assert build_match(parsed) == '(("sqlite")) NOT ("postgres" OR "mysql")'


def test_minus_inside_a_word_is_not_exclusion() -> None:
    parsed = parse_query("e-mail state-of-the-art")
    assert parsed.excluded == ()
    assert parsed.terms == ("e", "mail", "state", "art")


def test_minus_excludes_only_the_first_word_of_a_hyphenated_token() -> None:
    parsed = parse_query("x -foo-bar")
    assert parsed.excluded == ("foo",)
    assert parsed.terms == ("x", "bar")


def test_lone_minus_and_exclusion_only_queries_are_empty() -> None:
    assert parse_query("-").empty
    parsed = parse_query("-postgres")
    assert parsed.excluded == ("postgres",)
    assert parsed.empty
    assert build_match(parsed) is None


def test_a_word_seen_as_a_term_is_not_then_excluded() -> None:
    assert parse_query("foo -foo").excluded == ()


def test_word_star_is_a_prefix() -> None:
    parsed = parse_query("datab* sqlite")
    assert parsed.prefixes == ("datab",)
    assert parsed.terms == ("sqlite",)
    assert build_match(parsed) == '("sqlite" OR "datab"*)'


def test_one_letter_prefix_is_a_plain_term() -> None:
    parsed = parse_query("a* x*")
    assert parsed.prefixes == ()
    assert parsed.terms == ("x",)  # "a" is a stopword


def test_excluded_prefix_is_excluded_as_a_word() -> None:
    assert parse_query("x -foo*").excluded == ("foo",)


def test_cjk_two_characters_is_one_phrase_of_single_characters() -> None:
    parsed = parse_query("数据")
    assert parsed.terms == ("数 据",)
    assert build_match(parsed) == '("数   据")'


def test_cjk_single_character() -> None:
    assert parse_query("库").terms == ("库",)


def test_cjk_longer_runs_become_overlapping_bigrams() -> None:
    parsed = parse_query("数据库设计")
    assert parsed.terms == ("数 据", "据 库", "库 设", "设 计")


def test_cjk_run_mixed_with_latin_and_kana() -> None:
    parsed = parse_query("sqlite数据库 東京")
    assert parsed.terms == ("数 据", "据 库", "sqlite", "東 京")


def test_cjk_phrase_is_spaced_in_the_match() -> None:
    parsed = parse_query('"数据库"')
    assert parsed.phrases == ("数据库",)
    assert build_match(parsed) == '"数 据 库"'


def test_cjk_minus_is_not_an_exclusion() -> None:
    parsed = parse_query("-数据")
    assert parsed.excluded == ()
    assert parsed.terms == ("数 据",)


@pytest.mark.parametrize(
    "query",
    [
        "sqlite AND postgres",
        "sqlite OR postgres",
        "sqlite NOT postgres",
        "NEAR(sqlite postgres, 5)",
        "title:sqlite postgres",
        "^sqlite ^postgres",
        "(sqlite) (postgres",
        "sqlite + postgres",
        "{sqlite} [postgres]",
    ],
)
def test_operators_are_plain_words_or_separators(query: str) -> None:
    parsed = parse_query(query)
    assert {"sqlite", "postgres"} <= set(parsed.terms)
    assert parsed.excluded == ()
    match = build_match(parsed)
    assert match is not None
    # every token is quoted: no bare FTS5 syntax outside the quotes
    outside = "".join(match.split('"')[::2])
    assert set(outside) <= set("() ORANDNOT*")
    assert "NEAR" not in outside
    assert ":" not in outside
    assert "^" not in outside


def test_upper_case_operator_words_become_lowercase_terms() -> None:
    parsed = parse_query("NEAR AND")
    assert parsed.terms == ("near",)


def test_emoji_are_dropped() -> None:
    assert parse_query("🎉 party 🎉").terms == ("party",)
    assert parse_query("🎉🎉").empty


def test_max_terms_cap() -> None:
    query = " ".join(f"word{i}" for i in range(200))
    parsed = parse_query(query)
    assert len(parsed.terms) == MAX_TERMS
    assert parsed.terms[0] == "word0"
    assert parsed.terms[-1] == f"word{MAX_TERMS - 1}"


def test_phrase_prefix_and_exclusion_caps() -> None:
    query = " ".join(f'"p{i} q" r{i}* -x{i}' for i in range(20))
    parsed = parse_query(query)
    assert len(parsed.phrases) == 8
    assert len(parsed.prefixes) == 8
    assert len(parsed.excluded) == 8


def test_ten_thousand_character_input() -> None:
    parsed = parse_query("lorem ipsum " * 834)
    assert parsed.terms == ("lorem", "ipsum")
    parsed = parse_query("x" * 10_000)
    assert parsed.terms == ("x" * 10_000,)
    parsed = parse_query('"' * 10_000)
    assert parsed.empty


def test_input_beyond_the_query_limit_is_ignored() -> None:
    parsed = parse_query("a " * MAX_QUERY_CHARS + "zebra")
    assert "zebra" not in parsed.terms


def test_highlight_collects_terms_prefixes_and_phrase_words() -> None:
    parsed = parse_query('sqlite "brown fox" datab* -postgres')
    assert parsed.highlight == ("sqlite", "datab", "brown", "fox")


def test_parsed_query_of_one_word() -> None:
    assert parse_query("sqlite") == ParsedQuery(terms=("sqlite",), highlight=("sqlite",))


def test_build_match_of_an_empty_query_is_none() -> None:
    assert build_match(ParsedQuery()) is None
    assert build_match(parse_query("   ")) is None
    assert build_match(parse_query("!!! ??? ---")) is None


def test_build_match_escapes_double_quotes() -> None:
    # parse_query never keeps a quote, but build_match must be safe for any ParsedQuery
    match = build_match(ParsedQuery(terms=('say "hi"',)))
    assert match == '("say ""hi""")'


@given(st.text(max_size=200))
def test_parse_query_never_raises_and_terms_are_clean(query: str) -> None:
    parsed = parse_query(query)
    assert len(parsed.terms) <= MAX_TERMS
    for token in (*parsed.terms, *parsed.prefixes, *parsed.excluded, *parsed.phrases):
        assert token
        assert '"' not in token
    match = build_match(parsed)
    assert (match is None) == parsed.empty


def test_normalize_bm25() -> None:
    assert normalize_bm25(0.0) == 0.0
    assert normalize_bm25(-1.0) == 0.5
    assert normalize_bm25(3.0) == 0.75
    assert 0.0 <= normalize_bm25(-1e9) < 1.0


# -- against a real FTS5 index ----------------------------------------------------------------


def test_bare_terms_are_or_ed(search_vault: Vault) -> None:
    assert found(search_vault, "sqlite redis") == {"sqlite.md", "decisions/queue.md"}


def test_more_matching_terms_rank_higher(search_vault: Vault) -> None:
    results = search_vault.search("database server postgres")
    assert results[0].path == "postgres.md"
    assert "sqlite.md" in {r.path for r in results}
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < score < 1.0 for score in scores)


def test_phrases_are_required(search_vault: Vault) -> None:
    assert found(search_vault, '"brown fox"') == {"fox.md"}
    assert found(search_vault, '"fox brown"') == set()
    assert found(search_vault, '"brown fox" lazy') == {"fox.md"}
    # With a phrase, bare terms only add to the ranking: they are not required.
    assert found(search_vault, '"brown fox" postgres') == {"fox.md"}
    assert found(search_vault, '"brown fox" "postgres server"') == set()


def test_exclusion(search_vault: Vault) -> None:
    assert found(search_vault, "database") == {"sqlite.md", "postgres.md"}
    assert found(search_vault, "database -postgres") == {"sqlite.md"}


def test_prefix(search_vault: Vault) -> None:
    assert found(search_vault, "datab*") == {"sqlite.md", "postgres.md"}
    assert found(search_vault, "pangr*") == {"fox.md"}


def test_operators_do_not_act_as_operators(search_vault: Vault) -> None:
    # As FTS5 syntax, "sqlite AND postgres" would find nothing; here it is OR-ed words.
    assert found(search_vault, "sqlite AND postgres") == {"sqlite.md", "postgres.md"}
    assert found(search_vault, "sqlite NOT postgres") >= {"sqlite.md", "postgres.md"}
    assert found(search_vault, "title:pangram") >= {"fox.md"}
    assert found(search_vault, "NEAR(brown fox)") >= {"fox.md"}


def test_stopword_only_query_finds_stopword_documents(search_vault: Vault) -> None:
    assert "stop.md" in found(search_vault, "to be or not to be")


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("数据", "chinese.md"),
        ("据库", "chinese.md"),
        ("数据库", "chinese.md"),
        ("存储", "chinese.md"),
    ],
)
def test_cjk_words_inside_sentences_are_found(search_vault: Vault, query: str, path: str) -> None:
    assert found(search_vault, query) == {path}


def test_japanese(search_vault: Vault) -> None:
    assert found(search_vault, "東京") == {"japanese.md"}
    assert found(search_vault, '"会議"') == {"japanese.md"}
    assert found(search_vault, '"京会"') == set()


def test_emoji_and_punctuation_queries(search_vault: Vault) -> None:
    assert found(search_vault, "🎉") == set()
    assert found(search_vault, "🎉party🎉") == {"emoji.md"}
    assert "emoji.md" in found(search_vault, 'a:colon "(parens)"')


def test_search_fts_directly(connection: Connection) -> None:
    assert fts_paths(connection, "database") == {"sqlite.md", "postgres.md"}
    assert fts_paths(connection, parse_query("redis")) == {"decisions/queue.md"}
    assert fts_paths(connection, "redis", content_types=["note"]) == set()
    assert fts_paths(connection, "redis", content_types=["decision"]) == {"decisions/queue.md"}
    assert fts_paths(connection, "redis", collections=["elsewhere"]) == set()
    assert fts_paths(connection, "redis", collections=["notes"]) == {"decisions/queue.md"}
    assert fts_paths(connection, "redis", since="2999-01-01T00:00:00Z") == set()
    assert fts_paths(connection, "redis", until="1970-01-01T00:00:00Z") == set()
    assert search_fts(connection, "database", limit=0) == []
    assert len(search_fts(connection, "database", limit=1)) == 1
    assert search_fts(connection, "") == []


def test_search_fts_hits_carry_raw_and_normalized_scores(connection: Connection) -> None:
    hits = search_fts(connection, "database")
    assert hits
    for hit in hits:
        assert hit.bm25 < 0  # FTS5's bm25() is negative, better is lower
        assert hit.score == normalize_bm25(hit.bm25)


def test_ten_thousand_character_queries_run(search_vault: Vault) -> None:
    assert isinstance(search_vault.search("sqlite " + "x" * 10_000), list)
    assert "sqlite.md" in found(search_vault, "sqlite " + "zz " * 5_000)
    assert search_vault.search('"' * 10_000) == []
    long_words = " ".join(f"w{i}" for i in range(2_000))
    assert search_vault.search(long_words) == []


_QUERY_ALPHABET = st.sampled_from(
    [*list("\"'-*:^()[]{}+,.;!?\\/ \t\n\r\x00"), "AND", "OR", "NOT", "NEAR", "sqlite", "数据", "é"]
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.one_of(
        st.text(),
        st.text(st.characters(codec="utf-8")),
        st.lists(_QUERY_ALPHABET, max_size=30).map("".join),
        st.lists(_QUERY_ALPHABET, max_size=30).map(" ".join),
    )
)
def test_search_never_raises_for_any_text(search_vault: Vault, query: str) -> None:
    results = search_vault.search(query)
    assert isinstance(results, list)
    for result in results:
        assert 0.0 <= result.score < 1.0
