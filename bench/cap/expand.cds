// Purchase orders with their lines (src/server/model.ts, namespace PlantData) as a CAP service, for the $expand
// benchmark (bench/expand.bench.ts): the same fields, types, lengths and nullability, and the header's lines as an
// association on PONumber. Decimal(18,4) money, Decimal(12,2) quantities, Edm.Date as Date, Edm.DateTimeOffset
// (milliseconds) as Timestamp.
@path: '/odata/v4/expand'
service ExpandService {
  @readonly
  entity PurchaseOrders {
    key PONumber             : String(20);
        VendorID             : String(20) not null;
        VendorName           : String(100);
        Status               : String(20) default 'Draft';
        OrderDate            : Timestamp;
        ExpectedDeliveryDate : Date;
        Buyer                : String(40);
        ShipTo               : String(60);
        PaymentTerms         : String(20);
        Currency             : String(3) default 'USD';
        FreightAmount        : Decimal(18, 4);
        TaxAmount            : Decimal(18, 4);
        PRNumber             : String(20);
        BlanketPONumber      : String(20);
        Account              : String(30);
        Notes                : String(4000);
        CreatedDate          : Timestamp not null;
        LastModifiedDate     : Timestamp not null;
        Lines                : Association to many POLineItems
                                 on Lines.PONumber = PONumber;
  }

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
