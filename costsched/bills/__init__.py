"""The clouds' bills: their billing exports read as line items (one module per cloud),
stored (per billing period, the newest delivery of a cumulative export: `deliveries`),
matched to costsched's placements (`match`), and the billed compute rates that
correct the stored prices (`rates`). `report --billed` sets them beside the estimates."""
