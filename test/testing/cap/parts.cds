// Parts of the reference model (src/server/model.ts, Part) as a CAP service, for the testing kit's check against SAP
// CAP (test/testing/cap.e2e.test.ts): the same names, types, lengths and nullability as the test's entity type.
@path: '/odata/v4/kit'
service KitService {
  @readonly
  entity Parts {
    key PartID         : String(40);
        Description    : String(200) not null;
        Category       : String(40);
        UnitCost       : Decimal(18, 4);
        QuantityOnHand : Decimal(12, 2) not null;
        ReorderPoint   : Decimal(12, 2);
        BinNumber      : Integer;
        IsCritical     : Boolean not null;
        Received       : Date;
  }
}
