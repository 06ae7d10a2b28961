"""The tables of the price history store (SQLAlchemy Core; portable SQL only)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
)

metadata = MetaData()

offerings = Table(
    "offerings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("cloud", String(16), nullable=False),
    Column("region", String(64), nullable=False),
    Column("zone", String(64), nullable=False),  # "" when the price is regional
    Column("instance_type", String(128), nullable=False),
    Column("market", String(16), nullable=False),
    Column("os", String(16), nullable=False),
    Column("gpu_model", String(32), nullable=False),
    Column("gpu_count", Integer, nullable=False),
    Column("vcpus", Integer, nullable=False),
    Column("memory_gb", Float, nullable=False),
    UniqueConstraint(
        "cloud", "region", "zone", "instance_type", "market", "os", name="uq_offering_key"
    ),
)

# One row per (offering, effective time). Times are whole seconds since the Unix epoch
# in UTC: unambiguous across SQLite and PostgreSQL, and cheap to compare and index.
prices = Table(
    "prices",
    metadata,
    Column("offering_id", Integer, ForeignKey("offerings.id"), primary_key=True),
    Column("effective_ts", BigInteger, primary_key=True),
    Column("usd_per_hour", Float, nullable=False),
    Column("source", String(128), nullable=False),
    # SQLite: one B-tree clustered on the key instead of a rowid table plus a key index.
    sqlite_with_rowid=False,
)
