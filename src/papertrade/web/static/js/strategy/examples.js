// The sources a new strategy starts from (both are examples from docs/strategies.md's style and
// pass the save-time check).

export const EXAMPLES = {
  dsl: `# An SMA crossover: long when the fast average crosses above the slow one
symbol BTCUSDT
timeframe 1h
when sma(10) crosses above sma(30) then buy 50%
when sma(10) crosses below sma(30) then close long
`,
  python: `class Strategy:
    symbol = "BTCUSDT"
    timeframe = "1h"
    params = {"fast": 10, "slow": 30}

    def init(self, ctx):
        self.fast = ctx.indicator("sma", self.params["fast"])
        self.slow = ctx.indicator("sma", self.params["slow"])

    def next(self, ctx):
        if ctx.crossover(self.fast, self.slow):
            ctx.buy(size=0.5)
        elif ctx.crossover(self.slow, self.fast):
            ctx.close()
`,
};
