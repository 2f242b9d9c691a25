"""Built-in instrument catalogue: real Binance USDⓈ-M filters and leverage brackets.

Filters (tick/step sizes, quantity and price limits, min notional, precisions, onboard dates)
come from one Binance `GET /fapi/v1/exchangeInfo` snapshot (March 2024); leverage brackets from
Binance's `GET /fapi/v1/leverageBracket` as of October 2024. Binance changes both from time to
time; the Binance feed always takes filters live and only borrows the brackets (which are not
public) from here. Each row also carries the simulation's reference price, daily volatility and
24h quote volume, which are plausible values, not quotes.
"""

from dataclasses import dataclass
from decimal import Decimal

from papertrade.trading.values import Bracket, Instrument

# symbol base tick step min_qty max_qty market_max_qty min_notional min_price max_price
#   price_precision quantity_precision onboard_ms
_FILTERS = """
BTCUSDT BTC 0.10 0.001 0.001 1000 120 100 556.80 4529764 2 3 1569398400000
ETHUSDT ETH 0.01 0.001 0.001 10000 2000 20 39.86 306177 2 3 1569398400000
BCHUSDT BCH 0.01 0.001 0.001 10000 850 20 13.93 100000 2 3 1569398400000
XRPUSDT XRP 0.0001 0.1 0.1 10000000 2000000 5 0.0143 100000 4 1 1569398400000
LTCUSDT LTC 0.01 0.001 0.001 10000 5000 20 3.61 100000 2 3 1569398400000
TRXUSDT TRX 0.00001 1 1 10000000 5000000 5 0.00132 20000 5 0 1569398400000
ETCUSDT ETC 0.001 0.01 0.01 100000 10000 20 1.051 100000 3 2 1569398400000
LINKUSDT LINK 0.001 0.01 0.01 200000 20000 20 0.464 100000 3 2 1569398400000
XLMUSDT XLM 0.00001 1 1 10000000 1000000 5 0.00648 20000 5 0 1569398400000
ADAUSDT ADA 0.00010 1 1 2000000 300000 5 0.01740 20000 5 0 1569398400000
BNBUSDT BNB 0.010 0.01 0.01 100000 2000 5 6.600 100000 3 2 1569398400000
ATOMUSDT ATOM 0.001 0.01 0.01 100000 20000 5 0.251 100000 3 2 1569398400000
DOGEUSDT DOGE 0.000010 1 1 50000000 30000000 5 0.002440 30 6 0 1569398400000
DOTUSDT DOT 0.001 0.1 0.1 1000000 50000 5 0.373 2398 3 1 1569398400000
SOLUSDT SOL 0.0010 1 1 1000000 5000 5 0.4200 6857 4 0 1569398400000
UNIUSDT UNI 0.0010 1 1 10000000 25000 5 0.3730 2684 4 0 1569398400000
AVAXUSDT AVAX 0.0010 1 1 100000 5000 5 0.3500 2403 4 0 1569398400000
NEARUSDT NEAR 0.0010 1 1 10000000 24000 5 0.0480 1000 4 0 1569398400000
AAVEUSDT AAVE 0.010 0.1 0.1 1000000 1250 5 4.340 38702 3 1 1569398400000
FILUSDT FIL 0.001 0.1 0.1 10000000 7500 5 1.381 10000 3 1 1569398400000
OPUSDT OP 0.0001000 0.1 0.1 10000000 100000 5 0.0001000 200 7 1 1654066800000
INJUSDT INJ 0.001000 0.1 0.1 1000000 25000 5 0.001000 2000 6 1 1660633200000
APTUSDT APT 0.00100 0.1 0.1 1000000 20000 5 0.00100 20000 5 1 1666076400000
ARBUSDT ARB 0.000100 0.1 0.1 1000000 200000 5 0.000100 2000 6 1 1679554800000
SUIUSDT SUI 0.000100 0.1 0.1 10000000 2000000 5 0.000100 2000 6 1 1683072000000
1000PEPEUSDT 1000PEPE 0.0000001 1 1 800000000 100000000 5 0.0000001 200 7 0 1683244800000
"""

# Simulation only: symbol reference_price daily_volatility quote_volume_24h (USDT)
_SIM = """
BTCUSDT 95000 0.025 15e9
ETHUSDT 3400 0.032 8e9
BCHUSDT 450 0.040 3e8
XRPUSDT 2.2 0.045 2e9
LTCUSDT 95 0.040 4e8
TRXUSDT 0.25 0.030 2e8
ETCUSDT 20 0.045 2e8
LINKUSDT 17 0.050 5e8
XLMUSDT 0.30 0.045 1e8
ADAUSDT 0.70 0.050 6e8
BNBUSDT 650 0.030 6e8
ATOMUSDT 5 0.050 1e8
DOGEUSDT 0.17 0.060 2e9
DOTUSDT 4.5 0.050 2e8
SOLUSDT 180 0.045 4e9
UNIUSDT 9 0.055 2e8
AVAXUSDT 25 0.055 4e8
NEARUSDT 3 0.055 2e8
AAVEUSDT 250 0.055 3e8
FILUSDT 3 0.055 1e8
OPUSDT 0.8 0.060 1e8
INJUSDT 15 0.060 1e8
APTUSDT 6 0.055 1e8
ARBUSDT 0.45 0.060 1e8
SUIUSDT 3.5 0.065 8e8
1000PEPEUSDT 0.012 0.075 6e8
"""

# Full leverage ladders: "initialLeverage:notionalCap:maintMarginRatio" per bracket, in order.
# Each floor is the previous cap; `cum` is derived (see build_brackets).
_LADDERS = {
    "BTCUSDT": "125:50000:0.004 100:600000:0.005 75:3000000:0.0065 50:12000000:0.01 "
    "25:70000000:0.02 20:100000000:0.025 10:230000000:0.05 5:480000000:0.1 "
    "4:600000000:0.125 3:800000000:0.15 2:1200000000:0.25 1:1800000000:0.5",
    "ETHUSDT": "125:50000:0.004 100:600000:0.005 75:3000000:0.0065 50:12000000:0.01 "
    "25:50000000:0.02 20:65000000:0.025 10:150000000:0.05 5:320000000:0.1 "
    "4:400000000:0.125 3:530000000:0.15 2:800000000:0.25 1:1200000000:0.5",
    "BNBUSDT": "75:10000:0.005 50:50000:0.006 40:200000:0.01 25:1500000:0.02 20:3000000:0.025 "
    "10:15000000:0.05 5:30000000:0.1 4:37500000:0.125 2:75000000:0.25 1:150000000:0.5",
    "SOLUSDT": "100:20000:0.005 75:100000:0.0065 50:800000:0.01 25:4000000:0.02 20:8000000:0.025 "
    "10:40000000:0.05 5:80000000:0.1 4:100000000:0.125 2:200000000:0.25 1:400000000:0.5",
    "XRPUSDT": "75:10000:0.005 50:20000:0.0065 40:160000:0.01 25:800000:0.02 20:1600000:0.025 "
    "10:8000000:0.05 5:16000000:0.1 4:20000000:0.125 2:40000000:0.25 1:80000000:0.5",
    "DOGEUSDT": "75:10000:0.005 50:50000:0.007 40:750000:0.01 25:800000:0.02 20:1600000:0.025 "
    "10:8000000:0.05 5:16000000:0.1 4:20000000:0.125 2:40000000:0.25 1:80000000:0.5",
    "ADAUSDT": "75:10000:0.005 50:50000:0.01 40:100000:0.015 25:500000:0.02 20:1000000:0.025 "
    "10:5000000:0.05 5:10000000:0.1 4:20000000:0.125 2:30000000:0.25 1:50000000:0.5",
    "AVAXUSDT": "75:5000:0.005 50:25000:0.0065 40:80000:0.01 25:400000:0.02 20:800000:0.025 "
    "10:4000000:0.05 5:8000000:0.1 4:10000000:0.125 2:20000000:0.25 1:50000000:0.5",
    "LINKUSDT": "75:10000:0.005 50:50000:0.01 40:80000:0.015 25:400000:0.02 20:800000:0.025 "
    "10:4000000:0.05 5:8000000:0.1 4:20000000:0.125 2:30000000:0.25 1:50000000:0.5",
    "DOTUSDT": "75:10000:0.0065 50:50000:0.01 40:100000:0.015 25:500000:0.02 20:800000:0.025 "
    "10:4000000:0.05 5:8000000:0.1 4:10000000:0.125 2:30000000:0.25 1:50000000:0.5",
    "LTCUSDT": "75:10000:0.005 50:50000:0.01 40:100000:0.015 25:750000:0.02 20:1000000:0.025 "
    "10:5000000:0.05 5:10000000:0.1 4:20000000:0.125 2:30000000:0.25 1:50000000:0.5",
    "TRXUSDT": "75:10000:0.0065 50:90000:0.01 40:120000:0.015 25:650000:0.02 20:800000:0.025 "
    "10:3000000:0.05 5:6000000:0.1 4:12000000:0.125 2:20000000:0.25 1:30000000:0.5",
    "BCHUSDT": "75:5000:0.005 50:10000:0.0065 40:100000:0.01 25:500000:0.02 20:1000000:0.025 "
    "10:5000000:0.05 5:10000000:0.1 4:15000000:0.125 2:25000000:0.25 1:50000000:0.5",
    "ATOMUSDT": "75:10000:0.006 50:50000:0.01 40:80000:0.015 25:200000:0.02 20:600000:0.025 "
    "10:2000000:0.05 5:4000000:0.1 4:5000000:0.125 2:12000000:0.25 1:20000000:0.5",
    "NEARUSDT": "75:10000:0.01 50:100000:0.015 25:500000:0.02 20:1000000:0.025 10:5000000:0.05 "
    "5:10000000:0.1 4:12500000:0.125 2:25000000:0.25 1:50000000:0.5",
    "FILUSDT": "75:50000:0.006 50:250000:0.01 40:350000:0.015 25:600000:0.02 20:800000:0.025 "
    "10:3000000:0.05 5:6000000:0.1 4:10000000:0.125 2:20000000:0.25 1:30000000:0.5",
    "APTUSDT": "75:10000:0.01 50:100000:0.015 25:900000:0.02 20:1100000:0.025 10:5000000:0.05 "
    "5:10000000:0.1 4:12500000:0.125 2:25000000:0.25 1:50000000:0.5",
    "ARBUSDT": "75:5000:0.006 50:50000:0.01 40:80000:0.015 25:200000:0.02 20:600000:0.025 "
    "10:2000000:0.05 5:4000000:0.1 4:5000000:0.125 2:12000000:0.25 1:20000000:0.5",
    "OPUSDT": "75:10000:0.006 50:50000:0.01 40:80000:0.015 25:300000:0.02 20:600000:0.025 "
    "10:3000000:0.05 5:6000000:0.1 4:7500000:0.125 2:18000000:0.25 1:30000000:0.5",
    "SUIUSDT": "75:20000:0.01 50:200000:0.015 25:1000000:0.02 20:2000000:0.025 10:10000000:0.05 "
    "5:20000000:0.1 4:25000000:0.125 2:50000000:0.25 1:100000000:0.5",
    "ETCUSDT": "75:10000:0.005 50:50000:0.01 40:80000:0.015 25:400000:0.02 20:800000:0.025 "
    "10:4000000:0.05 5:8000000:0.1 4:20000000:0.125 2:30000000:0.25 1:50000000:0.5",
    "UNIUSDT": "75:10000:0.006 50:50000:0.01 40:80000:0.015 25:300000:0.02 20:900000:0.025 "
    "10:3000000:0.05 5:6000000:0.1 4:7500000:0.125 2:18000000:0.25 1:30000000:0.5",
    "AAVEUSDT": "75:10000:0.01 50:40000:0.015 25:200000:0.02 20:400000:0.025 10:2000000:0.05 "
    "5:4000000:0.1 4:5000000:0.125 2:10000000:0.25 1:20000000:0.5",
    "1000PEPEUSDT": "75:20000:0.0065 50:200000:0.01 40:300000:0.015 25:1500000:0.02 "
    "20:3000000:0.025 10:15000000:0.05 5:30000000:0.1 4:37500000:0.125 2:75000000:0.25 "
    "1:150000000:0.5",
    "XLMUSDT": "50:10000:0.015 20:150000:0.025 15:250000:0.03 10:1000000:0.05 5:2000000:0.1 "
    "4:5000000:0.125 2:10000000:0.25 1:20000000:0.5",
    "INJUSDT": "75:10000:0.01 50:40000:0.015 25:200000:0.02 20:400000:0.025 10:2000000:0.05 "
    "5:4000000:0.1 4:5000000:0.125 2:12000000:0.25 1:20000000:0.5",
}

# For symbols Binance lists but this catalogue does not: a conservative small-cap ladder.
_DEFAULT_LADDER = (
    "20:5000:0.025 10:25000:0.05 5:100000:0.1 4:250000:0.125 2:1000000:0.25 1:3000000:0.5"
)


@dataclass(frozen=True, slots=True)
class SimProfile:
    """How the simulated market moves one symbol (model parameters, not money)."""

    ref_price: Decimal
    daily_vol: float  # standard deviation of the daily log return
    quote_volume_24h: Decimal  # typical USDT traded per day


def build_brackets(ladder: str) -> tuple[Bracket, ...]:
    """Brackets from "lev:cap:mmr ..." with floors chained and cum derived as Binance does."""
    rows: list[Bracket] = []
    floor = Decimal(0)
    cum = Decimal(0)
    prev_ratio = Decimal(0)
    for number, item in enumerate(ladder.split(), start=1):
        lev, cap, ratio = item.split(":")
        # Binance's maintenance amount keeps maint margin continuous across bracket edges.
        cum += floor * (Decimal(ratio) - prev_ratio)
        rows.append(Bracket(number, int(lev), floor, Decimal(cap), Decimal(ratio), cum))
        floor, prev_ratio = Decimal(cap), Decimal(ratio)
    return tuple(rows)


DEFAULT_BRACKETS = build_brackets(_DEFAULT_LADDER)


def _decimals(step: Decimal) -> int:
    exponent = step.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def make_instrument(symbol: str, tick_size: Decimal, step_size: Decimal) -> Instrument:
    """A generic instrument for a symbol the catalogue does not know (replay data, tests)."""
    base = symbol[:-4] if symbol.endswith("USDT") else symbol
    return Instrument(
        symbol=symbol,
        base_asset=base,
        quote_asset="USDT",
        tick_size=tick_size,
        step_size=step_size,
        min_qty=step_size,
        max_qty=step_size * 10**9,
        market_max_qty=step_size * 10**8,
        min_notional=Decimal(5),
        min_price=tick_size,
        max_price=Decimal(1_000_000),
        price_precision=_decimals(tick_size),
        quantity_precision=_decimals(step_size),
        brackets=DEFAULT_BRACKETS,
    )


def _parse() -> tuple[dict[str, Instrument], dict[str, SimProfile]]:
    instruments: dict[str, Instrument] = {}
    for line in _FILTERS.strip().splitlines():
        f = line.split()
        symbol = f[0]
        instruments[symbol] = Instrument(
            symbol=symbol,
            base_asset=f[1],
            quote_asset="USDT",
            tick_size=Decimal(f[2]),
            step_size=Decimal(f[3]),
            min_qty=Decimal(f[4]),
            max_qty=Decimal(f[5]),
            market_max_qty=Decimal(f[6]),
            min_notional=Decimal(f[7]),
            min_price=Decimal(f[8]),
            max_price=Decimal(f[9]),
            price_precision=int(f[10]),
            quantity_precision=int(f[11]),
            brackets=build_brackets(_LADDERS[symbol]),
            onboard_date=int(f[12]),
        )
    profiles = {}
    for line in _SIM.strip().splitlines():
        symbol, ref, vol, volume = line.split()
        profiles[symbol] = SimProfile(Decimal(ref), float(vol), Decimal(volume))
    return instruments, profiles


_INSTRUMENTS, _PROFILES = _parse()


def catalogue() -> dict[str, Instrument]:
    """Every catalogued instrument by symbol (a fresh dict; the instruments are immutable)."""
    return dict(_INSTRUMENTS)


def get_instrument(symbol: str) -> Instrument | None:
    """The catalogued instrument, or None."""
    return _INSTRUMENTS.get(symbol)


def brackets_for(symbol: str) -> tuple[Bracket, ...]:
    """Real brackets for a catalogued symbol, else the conservative default ladder."""
    known = _INSTRUMENTS.get(symbol)
    return known.brackets if known is not None else DEFAULT_BRACKETS


def sim_profile(symbol: str) -> SimProfile:
    """Simulation parameters of a catalogued symbol (KeyError for others)."""
    return _PROFILES[symbol]
