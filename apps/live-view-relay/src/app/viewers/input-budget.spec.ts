import { InputBudget } from './input-budget';

describe('InputBudget', () => {
  it('allows a burst up to the rate, then refills over time', () => {
    let now = 0;
    const budget = new InputBudget(10, () => now);
    for (let i = 0; i < 10; i++) expect(budget.take()).toBe(true);
    expect(budget.take()).toBe(false);
    now += 100;
    expect(budget.take()).toBe(true);
    expect(budget.take()).toBe(false);
    now += 10_000;
    for (let i = 0; i < 10; i++) expect(budget.take()).toBe(true);
    expect(budget.take()).toBe(false);
  });
});
