"""The clouds' bills: their billing exports read as line items (one module per cloud),
stored, matched to costsched's placements (`match`), and the billed compute rates that
correct the stored prices (`rates`). `report --billed` sets them beside the estimates."""
