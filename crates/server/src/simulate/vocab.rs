//! Vocabularies of real-looking values, one per kind: people, places with their coordinates, countries
//! with their codes, currencies with rough rates, companies with tickers, teams, titles by domain.

/// A city with what must agree with it in one record.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub city: &'static str,
    pub region: &'static str,
    pub country: &'static str,
    pub alpha2: &'static str,
    pub lat: f64,
    pub lon: f64,
    pub timezone: &'static str,
}

macro_rules! place {
    ($c:expr, $r:expr, $n:expr, $a:expr, $lat:expr, $lon:expr, $tz:expr) => {
        Place {
            city: $c,
            region: $r,
            country: $n,
            alpha2: $a,
            lat: $lat,
            lon: $lon,
            timezone: $tz,
        }
    };
}

#[rustfmt::skip]
pub const PLACES: &[Place] = &[
    place!("New York", "New York", "United States", "US", 40.7128, -74.006, "America/New_York"),
    place!("Los Angeles", "California", "United States", "US", 34.0522, -118.2437, "America/Los_Angeles"),
    place!("Chicago", "Illinois", "United States", "US", 41.8781, -87.6298, "America/Chicago"),
    place!("London", "England", "United Kingdom", "GB", 51.5074, -0.1278, "Europe/London"),
    place!("Paris", "Ile-de-France", "France", "FR", 48.8566, 2.3522, "Europe/Paris"),
    place!("Berlin", "Berlin", "Germany", "DE", 52.52, 13.405, "Europe/Berlin"),
    place!("Madrid", "Community of Madrid", "Spain", "ES", 40.4168, -3.7038, "Europe/Madrid"),
    place!("Rome", "Lazio", "Italy", "IT", 41.9028, 12.4964, "Europe/Rome"),
    place!("Amsterdam", "North Holland", "Netherlands", "NL", 52.3676, 4.9041, "Europe/Amsterdam"),
    place!("Tokyo", "Tokyo", "Japan", "JP", 35.6762, 139.6503, "Asia/Tokyo"),
    place!("Seoul", "Seoul", "South Korea", "KR", 37.5665, 126.978, "Asia/Seoul"),
    place!("Mumbai", "Maharashtra", "India", "IN", 19.076, 72.8777, "Asia/Kolkata"),
    place!("Singapore", "Singapore", "Singapore", "SG", 1.3521, 103.8198, "Asia/Singapore"),
    place!("Sydney", "New South Wales", "Australia", "AU", -33.8688, 151.2093, "Australia/Sydney"),
    place!("Toronto", "Ontario", "Canada", "CA", 43.6532, -79.3832, "America/Toronto"),
    place!("Mexico City", "CDMX", "Mexico", "MX", 19.4326, -99.1332, "America/Mexico_City"),
    place!("Sao Paulo", "Sao Paulo", "Brazil", "BR", -23.5505, -46.6333, "America/Sao_Paulo"),
    place!("Buenos Aires", "Buenos Aires", "Argentina", "AR", -34.6037, -58.3816, "America/Argentina/Buenos_Aires"),
    place!("Dubai", "Dubai", "United Arab Emirates", "AE", 25.2048, 55.2708, "Asia/Dubai"),
    place!("Istanbul", "Istanbul", "Turkey", "TR", 41.0082, 28.9784, "Europe/Istanbul"),
    place!("Cairo", "Cairo", "Egypt", "EG", 30.0444, 31.2357, "Africa/Cairo"),
    place!("Lisbon", "Lisbon", "Portugal", "PT", 38.7223, -9.1393, "Europe/Lisbon"),
    place!("Cape Town", "Western Cape", "South Africa", "ZA", -33.9249, 18.4241, "Africa/Johannesburg"),
    place!("Stockholm", "Stockholm", "Sweden", "SE", 59.3293, 18.0686, "Europe/Stockholm"),
];

/// Country name, ISO alpha-2, alpha-3, currency, main language, capital.
#[rustfmt::skip]
pub const COUNTRIES: &[(&str, &str, &str, &str, &str, &str)] = &[
    ("United States", "US", "USA", "USD", "en", "Washington, D.C."),
    ("United Kingdom", "GB", "GBR", "GBP", "en", "London"),
    ("France", "FR", "FRA", "EUR", "fr", "Paris"),
    ("Germany", "DE", "DEU", "EUR", "de", "Berlin"),
    ("Spain", "ES", "ESP", "EUR", "es", "Madrid"),
    ("Italy", "IT", "ITA", "EUR", "it", "Rome"),
    ("Netherlands", "NL", "NLD", "EUR", "nl", "Amsterdam"),
    ("Japan", "JP", "JPN", "JPY", "ja", "Tokyo"),
    ("South Korea", "KR", "KOR", "KRW", "ko", "Seoul"),
    ("India", "IN", "IND", "INR", "hi", "New Delhi"),
    ("Singapore", "SG", "SGP", "SGD", "en", "Singapore"),
    ("Australia", "AU", "AUS", "AUD", "en", "Canberra"),
    ("Canada", "CA", "CAN", "CAD", "en", "Ottawa"),
    ("Mexico", "MX", "MEX", "MXN", "es", "Mexico City"),
    ("Brazil", "BR", "BRA", "BRL", "pt", "Brasilia"),
    ("Argentina", "AR", "ARG", "ARS", "es", "Buenos Aires"),
    ("United Arab Emirates", "AE", "ARE", "AED", "ar", "Abu Dhabi"),
    ("Turkey", "TR", "TUR", "TRY", "tr", "Ankara"),
    ("Egypt", "EG", "EGY", "EGP", "ar", "Cairo"),
    ("Portugal", "PT", "PRT", "EUR", "pt", "Lisbon"),
    ("South Africa", "ZA", "ZAF", "ZAR", "en", "Pretoria"),
    ("Sweden", "SE", "SWE", "SEK", "sv", "Stockholm"),
    ("China", "CN", "CHN", "CNY", "zh", "Beijing"),
    ("Switzerland", "CH", "CHE", "CHF", "de", "Bern"),
];

/// Code, name, symbol, units per US dollar (rough, for magnitudes only).
#[rustfmt::skip]
pub const CURRENCIES: &[(&str, &str, &str, f64)] = &[
    ("USD", "US Dollar", "$", 1.0),
    ("EUR", "Euro", "€", 0.92),
    ("GBP", "British Pound", "£", 0.79),
    ("JPY", "Japanese Yen", "¥", 150.0),
    ("CAD", "Canadian Dollar", "C$", 1.36),
    ("AUD", "Australian Dollar", "A$", 1.52),
    ("CHF", "Swiss Franc", "CHF", 0.88),
    ("CNY", "Chinese Yuan", "¥", 7.2),
    ("INR", "Indian Rupee", "₹", 83.0),
    ("BRL", "Brazilian Real", "R$", 5.0),
    ("MXN", "Mexican Peso", "$", 17.0),
    ("KRW", "South Korean Won", "₩", 1330.0),
    ("SGD", "Singapore Dollar", "S$", 1.34),
    ("SEK", "Swedish Krona", "kr", 10.5),
    ("NOK", "Norwegian Krone", "kr", 10.6),
    ("NZD", "New Zealand Dollar", "NZ$", 1.64),
    ("HKD", "Hong Kong Dollar", "HK$", 7.8),
    ("ZAR", "South African Rand", "R", 18.5),
    ("TRY", "Turkish Lira", "₺", 32.0),
    ("AED", "UAE Dirham", "AED", 3.67),
    ("RUB", "Russian Ruble", "₽", 92.0),
    ("TND", "Tunisian Dinar", "DT", 3.1),
    ("EGP", "Egyptian Pound", "E£", 48.0),
    ("ARS", "Argentine Peso", "$", 870.0),
];

/// Units of `code` per US dollar, when known.
pub fn per_usd(code: &str) -> Option<f64> {
    let c = code.trim().to_uppercase();
    CURRENCIES.iter().find(|x| x.0 == c).map(|x| x.3)
}

#[rustfmt::skip]
pub const LANGUAGES: &[(&str, &str)] = &[
    ("en", "English"), ("es", "Spanish"), ("fr", "French"), ("de", "German"), ("pt", "Portuguese"),
    ("it", "Italian"), ("ja", "Japanese"), ("ko", "Korean"), ("zh", "Chinese"), ("ar", "Arabic"),
    ("hi", "Hindi"), ("ru", "Russian"), ("nl", "Dutch"), ("tr", "Turkish"), ("sv", "Swedish"),
];

/// Name, ticker, exchange, sector, country, web domain, rough share price in US dollars.
#[rustfmt::skip]
pub const COMPANIES: &[(&str, &str, &str, &str, &str, &str, f64)] = &[
    ("Apple Inc.", "AAPL", "NASDAQ", "Technology", "US", "apple.com", 190.0),
    ("Microsoft Corporation", "MSFT", "NASDAQ", "Technology", "US", "microsoft.com", 420.0),
    ("Amazon.com, Inc.", "AMZN", "NASDAQ", "Consumer Cyclical", "US", "amazon.com", 180.0),
    ("Alphabet Inc.", "GOOGL", "NASDAQ", "Communication Services", "US", "abc.xyz", 170.0),
    ("Tesla, Inc.", "TSLA", "NASDAQ", "Consumer Cyclical", "US", "tesla.com", 180.0),
    ("NVIDIA Corporation", "NVDA", "NASDAQ", "Technology", "US", "nvidia.com", 900.0),
    ("Meta Platforms, Inc.", "META", "NASDAQ", "Communication Services", "US", "meta.com", 480.0),
    ("International Business Machines Corporation", "IBM", "NYSE", "Technology", "US", "ibm.com", 170.0),
    ("JPMorgan Chase & Co.", "JPM", "NYSE", "Financial Services", "US", "jpmorganchase.com", 195.0),
    ("The Coca-Cola Company", "KO", "NYSE", "Consumer Defensive", "US", "coca-colacompany.com", 60.0),
    ("Walmart Inc.", "WMT", "NYSE", "Consumer Defensive", "US", "walmart.com", 65.0),
    ("Netflix, Inc.", "NFLX", "NASDAQ", "Communication Services", "US", "netflix.com", 600.0),
    ("Intel Corporation", "INTC", "NASDAQ", "Technology", "US", "intel.com", 35.0),
    ("Visa Inc.", "V", "NYSE", "Financial Services", "US", "visa.com", 275.0),
    ("Johnson & Johnson", "JNJ", "NYSE", "Healthcare", "US", "jnj.com", 150.0),
    ("Toyota Motor Corporation", "TM", "NYSE", "Consumer Cyclical", "JP", "toyota.com", 230.0),
    ("SAP SE", "SAP", "NYSE", "Technology", "DE", "sap.com", 190.0),
    ("Shell plc", "SHEL", "NYSE", "Energy", "GB", "shell.com", 70.0),
];

/// Name, symbol, rough price in US dollars.
#[rustfmt::skip]
pub const CRYPTO: &[(&str, &str, f64)] = &[
    ("Bitcoin", "BTC", 64000.0), ("Ethereum", "ETH", 3200.0), ("Tether", "USDT", 1.0), ("BNB", "BNB", 580.0),
    ("Solana", "SOL", 150.0), ("XRP", "XRP", 0.52), ("Cardano", "ADA", 0.45), ("Dogecoin", "DOGE", 0.15),
    ("Polkadot", "DOT", 7.0), ("Litecoin", "LTC", 80.0),
];

#[rustfmt::skip]
pub const FIRST: &[&str] = &[
    "James", "Maria", "Liam", "Sofia", "Noah", "Emma", "Lucas", "Aisha", "Mateo", "Yuki", "Elena", "Omar",
    "Chloe", "Ravi", "Hannah", "Diego", "Nora", "Kenji", "Isabel", "Samuel", "Olivia", "Daniel", "Grace",
    "Ethan", "Zara", "Leo", "Mia", "Adam", "Lina", "Marco",
];
#[rustfmt::skip]
pub const LAST: &[&str] = &[
    "Smith", "Garcia", "Johnson", "Rossi", "Nguyen", "Kim", "Silva", "Brown", "Martin", "Lopez", "Wilson",
    "Patel", "Tanaka", "Novak", "Dubois", "Andersen", "Costa", "Murphy", "Schmidt", "Ali", "Walker", "Moreau",
    "Fischer", "Santos", "Clarke", "Ivanova", "Chen", "Okafor",
];

/// Football club, country, league.
#[rustfmt::skip]
pub const FOOTBALL: &[(&str, &str, &str)] = &[
    ("Manchester City", "England", "Premier League"),
    ("Arsenal", "England", "Premier League"),
    ("Liverpool", "England", "Premier League"),
    ("Chelsea", "England", "Premier League"),
    ("Real Madrid", "Spain", "LaLiga"),
    ("FC Barcelona", "Spain", "LaLiga"),
    ("Atletico Madrid", "Spain", "LaLiga"),
    ("Bayern Munich", "Germany", "Bundesliga"),
    ("Borussia Dortmund", "Germany", "Bundesliga"),
    ("Inter", "Italy", "Serie A"),
    ("Juventus", "Italy", "Serie A"),
    ("AC Milan", "Italy", "Serie A"),
    ("Paris Saint-Germain", "France", "Ligue 1"),
    ("Olympique de Marseille", "France", "Ligue 1"),
    ("Ajax", "Netherlands", "Eredivisie"),
    ("Benfica", "Portugal", "Primeira Liga"),
];
#[rustfmt::skip]
pub const NBA: &[&str] = &[
    "Boston Celtics", "Los Angeles Lakers", "Golden State Warriors", "Miami Heat", "Denver Nuggets",
    "Milwaukee Bucks", "Chicago Bulls", "New York Knicks", "Phoenix Suns", "Dallas Mavericks",
];

/// IATA code, airport, city, country code.
#[rustfmt::skip]
pub const AIRPORTS: &[(&str, &str, &str, &str)] = &[
    ("JFK", "John F. Kennedy International Airport", "New York", "US"),
    ("LAX", "Los Angeles International Airport", "Los Angeles", "US"),
    ("LHR", "Heathrow Airport", "London", "GB"),
    ("CDG", "Charles de Gaulle Airport", "Paris", "FR"),
    ("FRA", "Frankfurt Airport", "Frankfurt", "DE"),
    ("MAD", "Adolfo Suarez Madrid-Barajas Airport", "Madrid", "ES"),
    ("AMS", "Amsterdam Airport Schiphol", "Amsterdam", "NL"),
    ("HND", "Tokyo Haneda Airport", "Tokyo", "JP"),
    ("DXB", "Dubai International Airport", "Dubai", "AE"),
    ("SIN", "Singapore Changi Airport", "Singapore", "SG"),
    ("SYD", "Sydney Kingsford Smith Airport", "Sydney", "AU"),
    ("YYZ", "Toronto Pearson International Airport", "Toronto", "CA"),
];
#[rustfmt::skip]
pub const AIRLINES: &[(&str, &str)] = &[
    ("AA", "American Airlines"), ("DL", "Delta Air Lines"), ("UA", "United Airlines"),
    ("BA", "British Airways"), ("AF", "Air France"), ("LH", "Lufthansa"), ("EK", "Emirates"),
    ("SQ", "Singapore Airlines"),
];

#[rustfmt::skip]
pub const STREETS: &[&str] = &[
    "Main Street", "Oak Avenue", "Maple Road", "Park Lane", "River Street", "High Street", "King Street",
    "Station Road", "Elm Street", "Market Street", "Broadway", "Church Road",
];

#[rustfmt::skip]
pub const SONGS: &[&str] = &[
    "Midnight Drive", "Golden Hour", "Paper Planes", "Electric Love", "Summer Rain", "Lost in the City",
    "Heartbeat", "Neon Lights", "Ocean Eyes", "Wildfire", "Falling Slowly", "Northern Sky", "Runaway",
    "Blue Velvet Morning", "Echoes", "Stay With Me",
];
#[rustfmt::skip]
pub const ARTISTS: &[&str] = &[
    "The Midnight Echoes", "Luna Rivera", "Arctic Pulse", "Nova Grey", "The Paper Kites", "Marcus Reed",
    "Velvet Avenue", "Sienna Cole", "Black Harbor", "DJ Solace", "The Lumineers", "Aria Moon",
];
#[rustfmt::skip]
pub const MOVIES: &[&str] = &[
    "The Last Horizon", "Shadows of Tomorrow", "A Quiet Storm", "The Glass Garden", "Midnight in Lisbon",
    "Broken Compass", "The Silent Witness", "Beyond the Ridge", "Iron Valley", "The Long Way Home",
    "City of Echoes", "Red Winter",
];
#[rustfmt::skip]
pub const BOOKS: &[&str] = &[
    "The Memory Keeper", "A Field Guide to Stars", "The Forgotten Shore", "Lessons in Chemistry",
    "The Clockmaker's Daughter", "Northern Lights", "The Art of Patience", "Salt and Silver",
];
#[rustfmt::skip]
pub const PRODUCTS: &[&str] = &[
    "Wireless Noise-Cancelling Headphones", "Stainless Steel Water Bottle 750ml", "Ergonomic Office Chair",
    "4K Ultra HD Smart TV 55\"", "Running Shoes Air Zoom", "Cotton Crew-Neck T-Shirt",
    "Espresso Coffee Maker", "Portable Bluetooth Speaker", "Smartphone 128GB Unlocked",
    "LED Desk Lamp with USB Charging", "Leather Crossbody Bag", "Mechanical Gaming Keyboard",
];
#[rustfmt::skip]
pub const RECIPES: &[&str] = &[
    "Chicken Tikka Masala", "Spaghetti Carbonara", "Vegetable Stir-Fry", "Classic Margherita Pizza",
    "Beef Tacos", "Lemon Garlic Salmon", "Mushroom Risotto", "Greek Salad", "Pad Thai", "Banana Bread",
];
#[rustfmt::skip]
pub const INGREDIENTS: &[&str] = &[
    "2 cups flour", "1 tbsp olive oil", "3 cloves garlic", "1 onion, diced", "200 g chicken breast",
    "1 tsp salt", "2 eggs", "1 cup milk", "250 g pasta", "1 can tomatoes",
];
#[rustfmt::skip]
pub const JOBS: &[&str] = &[
    "Senior Software Engineer", "Data Analyst", "Product Manager", "Marketing Coordinator",
    "Registered Nurse", "Sales Representative", "UX Designer", "Financial Analyst", "DevOps Engineer",
    "Customer Success Manager",
];
#[rustfmt::skip]
pub const HEADLINES: &[&str] = &[
    "Markets rally as inflation cools", "New study links sleep to memory",
    "City council approves transit plan", "Tech giant unveils new AI assistant",
    "Championship final set for Sunday", "Storm warning issued for coast",
    "Startup raises $40 million in Series B", "Scientists discover new exoplanet",
    "Local elections see record turnout", "Central bank holds interest rates steady",
];
#[rustfmt::skip]
pub const NEWS_SOURCES: &[&str] = &[
    "Reuters", "BBC News", "The Guardian", "CNN", "Bloomberg", "Associated Press", "TechCrunch", "Al Jazeera",
];
#[rustfmt::skip]
pub const WEATHER: &[&str] = &[
    "clear sky", "few clouds", "scattered clouds", "overcast clouds", "light rain", "moderate rain",
    "thunderstorm", "mist", "light snow",
];
#[rustfmt::skip]
pub const EVENTS: &[&str] = &[
    "Summer Music Festival", "Tech Innovators Summit", "City Marathon", "Jazz Night Live", "Food & Wine Expo",
    "Art Basel Preview", "Startup Pitch Night",
];
#[rustfmt::skip]
pub const ANIMALS: &[&str] = &[
    "Labrador Retriever", "Siamese Cat", "Golden Eagle", "Bottlenose Dolphin", "Red Fox", "African Elephant",
];
#[rustfmt::skip]
pub const QUOTES: &[&str] = &[
    "The only way to do great work is to love what you do.", "Simplicity is the ultimate sophistication.",
    "Stay hungry, stay foolish.", "What we think, we become.", "Well done is better than well said.",
];
#[rustfmt::skip]
pub const MUSIC_GENRES: &[&str] = &[
    "Pop", "Rock", "Hip-Hop", "Jazz", "Electronic", "R&B", "Indie", "Classical", "Country",
];
#[rustfmt::skip]
pub const MOVIE_GENRES: &[&str] = &[
    "Drama", "Comedy", "Action", "Thriller", "Documentary", "Sci-Fi", "Romance", "Animation",
];
#[rustfmt::skip]
pub const NEWS_TOPICS: &[&str] = &[
    "business", "technology", "sports", "politics", "health", "science", "entertainment", "world",
];
#[rustfmt::skip]
pub const PRODUCT_CATEGORIES: &[&str] = &[
    "Electronics", "Home & Kitchen", "Clothing", "Sports & Outdoors", "Beauty", "Books", "Toys & Games",
];
#[rustfmt::skip]
pub const COLORS: &[&str] = &[
    "black", "white", "red", "blue", "green", "grey", "navy", "beige",
];
#[rustfmt::skip]
pub const EMAIL_DOMAINS: &[&str] = &[
    "gmail.com", "outlook.com", "yahoo.com", "example.org", "proton.me",
];
#[rustfmt::skip]
pub const WORDS: &[&str] = &[
    "harbor", "signal", "garden", "summit", "canvas", "journey", "meadow", "lantern", "river", "compass",
    "orbit", "ember", "willow", "granite", "falcon", "prism",
];
#[rustfmt::skip]
pub const JOKES: &[&str] = &[
    "I told my computer I needed a break, and it said: no problem, I'll go to sleep.",
    "Why do programmers prefer dark mode? Because light attracts bugs.",
    "I'm reading a book about anti-gravity. It's impossible to put down.",
    "Why did the scarecrow win an award? He was outstanding in his field.",
    "What do you call a fake noodle? An impasta.",
];
#[rustfmt::skip]
pub const BRANDS: &[&str] = &[
    "Samsung", "Sony", "Nike", "Adidas", "Apple", "Philips", "Bosch", "Logitech", "Anker", "IKEA", "Lenovo",
    "Dyson",
];
pub const LEVELS: &[&str] = &["Easy", "Medium", "Hard"];
#[rustfmt::skip]
pub const CATEGORIES: &[&str] = &[
    "general", "standard", "business", "education", "technology", "health", "lifestyle",
];
pub const MOVIE_JOBS: &[&str] = &["Director", "Writer", "Actor", "Producer", "Composer"];
pub const POSITIONS: &[&str] = &["Goalkeeper", "Defender", "Midfielder", "Forward"];

/// International dialling code of a country (ISO alpha-2).
pub fn dial_code(alpha2: &str) -> &'static str {
    match alpha2 {
        "US" | "CA" => "+1",
        "GB" => "+44",
        "FR" => "+33",
        "DE" => "+49",
        "ES" => "+34",
        "IT" => "+39",
        "NL" => "+31",
        "JP" => "+81",
        "KR" => "+82",
        "IN" => "+91",
        "SG" => "+65",
        "AU" => "+61",
        "MX" => "+52",
        "BR" => "+55",
        "AR" => "+54",
        "AE" => "+971",
        "TR" => "+90",
        "EG" => "+20",
        "PT" => "+351",
        "ZA" => "+27",
        "SE" => "+46",
        "CN" => "+86",
        "CH" => "+41",
        _ => "+1",
    }
}
#[rustfmt::skip]
pub const FACTS: &[&str] = &[
    "Cats sleep for around 13 to 16 hours a day.", "Honey never spoils if it is stored sealed.",
    "Octopuses have three hearts.", "The Eiffel Tower grows about 15 cm taller in summer.",
    "A group of flamingos is called a flamboyance.",
];
#[rustfmt::skip]
pub const SENTENCES: &[&str] = &[
    "The team shipped the new release after two weeks of testing.",
    "Prices are updated every hour from the provider's feed.",
    "Most requests are answered within a few seconds.", "The museum reopened its east wing after renovation.",
    "Visitors can book tickets online up to three months ahead.", "The report covers the last four quarters.",
];
pub const POSTS: &[&str] = &[
    "Just finished a 10k run, feeling great!",
    "Can't believe how good this new album is.",
    "Big announcement coming next week, stay tuned.",
    "Sunset views from the rooftop tonight.",
    "Thanks everyone for the support on our launch today!",
    "Coffee first, then emails.",
];
