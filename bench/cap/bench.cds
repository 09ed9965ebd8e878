// POLineItems of the reference model (src/server/model.ts, namespace PlantData) as a CAP service, for the HTTP
// benchmark (bench/http.bench.ts): the same fields, types, lengths and nullability. Decimal(18,4) money,
// Decimal(12,2) quantities, Edm.Date as Date, Edm.DateTimeOffset (milliseconds) as Timestamp.
@path: '/odata/v4/bench'
service BenchService {
  @readonly
  entity POLineItems {
    key PONumber         : String(20);
    key LineNumber       : Integer;
        PartID           : String(40);
        Description      : String(200) not null;
        QuantityOrdered  : Decimal(12, 2) not null;
        QuantityReceived : Decimal(12, 2) default 0;
        UnitOfMeasure    : String(10) not null;
        UnitPrice        : Decimal(18, 4) not null;
        ExtendedPrice    : Decimal(18, 4) not null;
        IsTaxable        : Boolean default false;
        Account          : String(30);
        WorkOrderID      : String(20);
        DueDate          : Date;
        Status           : String(20) default 'Open';
        CreatedDate      : Timestamp not null;
        LastModifiedDate : Timestamp not null;
  }
}
