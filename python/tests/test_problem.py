# pacheck.Problem: fields, zero-copy DLPack views, storage-dtype arrays, tables, case files and make_problem's checks.
import numpy as np
import pytest

import pacheck


def decode_and_continuation(dtype="fp32"):
    return pacheck.make_problem(dtype=dtype, num_kv_heads=2, gqa_ratio=3, head_dim=8, block_size=4,
                                sequences=[(5, 1), (10, 3)], table_padding=2, spare_blocks=3, seed=7, tile_size=3)


def test_fields_describe_the_problem():
    p = decode_and_continuation()
    assert (p.dtype, p.num_query_heads, p.num_kv_heads, p.gqa_ratio, p.head_dim, p.block_size) == \
        ("fp32", 6, 2, 3, 8, 4)
    assert (p.num_sequences, p.total_queries, p.max_context_len) == (2, 4, 10)
    assert p.modes == ["decode", "continuation"]
    assert p.scale == pytest.approx(8 ** -0.5)
    assert (p.tile_size, p.split_size, p.num_splits) == (3, 64, 0)
    assert [s.context_len for s in p.sequences] == [5, 10]
    assert [s.first_query_position for s in p.sequences] == [4, 7]
    assert p.num_blocks == 2 + 3 + 3  # blocks the contexts need plus the spare ones
    assert "continuation context_len=10 num_queries=3" in p.describe()


def test_float_arrays_are_zero_copy_dlpack_views():
    p = decode_and_continuation()
    k = p.k_pool
    assert k.dtype == np.float32 and k.shape == (p.num_blocks, 4, 2, 8)
    assert p.queries.shape == (4, 6, 8) and p.v_pool.shape == k.shape
    assert np.shares_memory(k, p.k_pool)  # two reads, one memory: pacheck's own
    assert np.shares_memory(np.from_dlpack(k), k)
    assert np.from_dlpack(p.queries).__array_interface__["data"][0] == p.queries.__array_interface__["data"][0]


def test_the_tables_and_lengths_name_exactly_the_slots_that_hold_keys():
    p = pacheck.make_problem(num_kv_heads=2, head_dim=4, block_size=4, sequences=[(5, 1), (10, 3)],
                             table_padding=2, spare_blocks=2, poison="nan", seed=3)
    referenced = np.zeros(p.k_pool.shape[:2], dtype=bool)  # [block, slot]
    for table, context in zip(p.block_tables, p.context_lens):
        for position in range(context):
            referenced[table[position // p.block_size], position % p.block_size] = True
    assert np.isfinite(p.k_pool[referenced]).all() and np.isfinite(p.v_pool[referenced]).all()
    assert np.isnan(p.k_pool[~referenced]).all() and np.isnan(p.v_pool[~referenced]).all()


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_storage_arrays_hold_the_dtype_bits_of_the_float_values(dtype):
    p = decode_and_continuation(dtype)
    for values, storage in [(p.queries, p.queries_storage), (p.k_pool, p.k_pool_storage),
                            (p.v_pool, p.v_pool_storage)]:
        assert storage.dtype == np.uint16 and storage.shape == values.shape
        if dtype == "fp16":
            decoded = storage.view(np.float16).astype(np.float32)
        else:
            assert not (values.view(np.uint32) & 0xFFFF).any()  # the values are rounded to bf16
            decoded = (storage.astype(np.uint32) << 16).view(np.float32)
        np.testing.assert_array_equal(decoded, values)


def test_fp32_storage_is_the_float_view_itself():
    p = decode_and_continuation("fp32")
    assert p.k_pool_storage.dtype == np.float32 and np.shares_memory(p.k_pool_storage, p.k_pool)


def test_tables_and_lengths():
    p = decode_and_continuation()
    tables = p.block_tables
    assert tables.dtype == np.int32 and tables.shape == (2, 5)
    np.testing.assert_array_equal(tables[0, :4], p.sequences[0].block_table)
    assert tables[0, 4] == -1  # the shorter table is padded with -1
    np.testing.assert_array_equal(tables[1], p.sequences[1].block_table)
    np.testing.assert_array_equal(p.context_lens, [5, 10])
    np.testing.assert_array_equal(p.query_lens, [1, 3])
    np.testing.assert_array_equal(p.query_starts, [0, 1, 4])
    assert p.context_lens.dtype == p.query_starts.dtype == np.int32
    assert p.split_size_for(10) == 64


def test_a_case_file_round_trips(tmp_path):
    p = decode_and_continuation("bf16")
    path = tmp_path / "case.json"
    pacheck.save_case(str(path), p, note="written by a test")
    q = pacheck.load_case(str(path))
    assert q.note == "written by a test"
    assert q.describe() == p.describe()
    for name in ("queries", "k_pool", "v_pool", "block_tables"):
        np.testing.assert_array_equal(getattr(q, name), getattr(p, name))


def test_a_bad_case_file_names_what_is_wrong(tmp_path):
    path = tmp_path / "case.json"
    path.write_text('{"format": "pacheck-case", "version": 3}')
    with pytest.raises(pacheck.CaseFileError, match="unsupported case file version 3"):
        pacheck.load_case(str(path))
    assert issubclass(pacheck.CaseFileError, ValueError)


@pytest.mark.parametrize("arguments, message", [
    (dict(sequences=[]), "sequences is empty"),
    (dict(sequences=[(4, 5)]), r"sequences\[0\] = \(4, 5\)"),
    (dict(sequences=[(4, 1)], head_dim=0), "head_dim must be positive"),
    (dict(sequences=[(4, 1)], dtype="fp8"), "unknown dtype 'fp8'"),
    (dict(sequences=[(4, 1)], values="gaussian"), "unknown value 'gaussian'; known: normal, all_negative"),
    (dict(sequences=[(4, 1)], poison="zero"), "unknown value 'zero'"),
    (dict(sequences=[(4, 1)], tile_size=0), "tile_size must be positive"),
    (dict(sequences=[(4, 1)], spare_blocks=-1), "spare_blocks must not be negative"),
    (dict(sequences=[(1 << 20, 1)], head_dim=256, num_kv_heads=8), "more than 2\\^27 values"),
])
def test_make_problem_names_the_bad_argument(arguments, message):
    with pytest.raises(ValueError, match=message):
        pacheck.make_problem(**arguments)


def test_the_same_seed_gives_the_same_values():
    a, b = decode_and_continuation("fp16"), decode_and_continuation("fp16")
    np.testing.assert_array_equal(a.v_pool, b.v_pool)
