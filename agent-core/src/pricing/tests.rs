#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// Each kind of token at its own price: plain input, cache reads, cache writes, plain output,
/// reasoning (within the output, never billed twice).
#[test]
fn each_kind_of_token_costs_its_own_price() {
    let price = ModelPrice::new(3.0, 15.0)
        .with_cached_input(0.3)
        .with_cache_write(3.75)
        .with_reasoning(20.0);
    let usage = Usage {
        input_tokens: 1_000_000,
        output_tokens: 200_000,
        cached_input_tokens: 500_000,
        cache_write_tokens: 100_000,
        reasoning_tokens: 50_000,
    };
    // 400k plain input × 3 + 500k reads × 0.3 + 100k writes × 3.75
    // + 150k plain output × 15 + 50k reasoning × 20, per million.
    let expected = 1.2 + 0.15 + 0.375 + 2.25 + 1.0;
    assert!(close(price.cost(&usage), expected), "{}", price.cost(&usage));
}

/// Without cache or reasoning prices, those tokens cost as much as plain input or output.
#[test]
fn missing_prices_fall_back_to_input_and_output() {
    let price = ModelPrice::new(2.0, 8.0);
    let usage = Usage {
        input_tokens: 1000,
        output_tokens: 500,
        cached_input_tokens: 400,
        cache_write_tokens: 100,
        reasoning_tokens: 200,
    };
    assert!(close(price.cost(&usage), (1000.0 * 2.0 + 500.0 * 8.0) / 1e6));
}

/// Counts a hostile server might send never panic and never go negative.
#[test]
fn odd_counts_do_not_panic() {
    let price = ModelPrice::new(1.0, 1.0);
    let usage = Usage {
        input_tokens: 10,
        output_tokens: 5,
        cached_input_tokens: u64::MAX,
        cache_write_tokens: u64::MAX,
        reasoning_tokens: u64::MAX,
    };
    assert!(price.cost(&usage) >= 0.0);
}

/// The worst case prices every input token uncached and the output at the dearer rate.
#[test]
fn worst_case_takes_the_dearer_rates() {
    let price = ModelPrice::new(1.0, 4.0).with_cached_input(0.1).with_reasoning(6.0);
    assert!(close(price.worst_case(1000, 100), (1000.0 + 600.0) / 1e6));
}

/// A model is found by its exact name, then by a dated snapshot of a known name (the longest),
/// past a `provider/` prefix; a different model that starts with a known name is not.
#[test]
fn models_match_by_name_snapshot_and_prefix() {
    let table = PriceTable::builtin();
    let mini = table.price("gpt-4o-mini").copied().unwrap();
    assert_eq!(table.price("gpt-4o-mini-2024-07-18"), Some(&mini));
    assert_ne!(table.price("gpt-4o-2024-08-06"), Some(&mini));
    assert_eq!(table.price("gpt-4o-2024-08-06"), table.price("gpt-4o"));
    assert_eq!(table.price("claude-sonnet-4-20250514"), table.price("claude-sonnet-4"));
    assert_eq!(table.price("claude-3-5-haiku-latest"), table.price("claude-3-5-haiku"));
    assert_eq!(table.price("gemini-2.0-flash-001"), table.price("gemini-2.0-flash"));
    assert_eq!(table.price("models/gemini-2.5-pro"), table.price("gemini-2.5-pro"));
    assert_eq!(table.price("openai/gpt-4.1-mini"), table.price("gpt-4.1-mini"));
    for unknown in [
        "o3-pro",
        "gpt-5-pro",
        "claude-opus-4-6",
        "gpt-4o-audio-preview",
        "scripted",
        "",
        "/",
    ] {
        assert_eq!(table.price(unknown), None, "{unknown}");
    }
    assert_eq!(table.cost("scripted", &Usage::default()), None);
}

/// Every built-in price is a real, non-negative figure, and the table is small.
#[test]
fn builtin_prices_are_sane() {
    let table = PriceTable::builtin();
    assert!(table.len() >= 15 && table.len() <= 40);
    for (model, price) in table.iter() {
        let figures = [price.input, price.output];
        let optional = [price.cached_input, price.cache_write, price.reasoning];
        for p in figures.into_iter().chain(optional.into_iter().flatten()) {
            assert!(p.is_finite() && p >= 0.0, "{model}");
        }
        assert!(price.output >= price.input, "{model}");
        assert!(price.cached_input.unwrap_or(price.input) <= price.input, "{model}");
    }
}

/// A host's prices replace the built-in ones of the same model and add new ones; as data the
/// table is a map of model to price fields.
#[test]
fn host_prices_override_and_read_as_data() {
    let mut table = PriceTable::builtin();
    let host: PriceTable = serde_json::from_value(serde_json::json!({
        "gpt-4o": {"input": 1.0, "output": 2.0},
        "my-model": {"input": 0.5, "cached_input": 0.05, "output": 1.5}
    }))
    .unwrap();
    table.extend(&host);
    assert_eq!(table.price("gpt-4o"), Some(&ModelPrice::new(1.0, 2.0)));
    assert_eq!(
        table.price("my-model"),
        Some(&ModelPrice::new(0.5, 1.5).with_cached_input(0.05))
    );
    let json = serde_json::to_value(&host).unwrap();
    assert_eq!(
        json["my-model"],
        serde_json::json!({"input": 0.5, "cached_input": 0.05, "output": 1.5})
    );
    assert!(serde_json::from_value::<PriceTable>(serde_json::json!({"m": {"input": 1, "ouput": 2}})).is_err());
}

/// A spend is known only when every call was priced.
#[test]
fn spend_totals_only_priced_calls() {
    let mut spend = Spend::default();
    spend.add_call(Some(0.25));
    assert_eq!(spend.total_usd(), Some(0.25));
    spend.add_call(None);
    assert_eq!(spend.total_usd(), None);
    assert!(close(spend.priced_usd, 0.25));
}
