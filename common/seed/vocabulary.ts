/** Word lists the seeder draws from; sent to PostgreSQL as arrays and indexed there. */

/** "a, b, c" over several lines -> ['a', 'b', 'c'], kept compact. */
const list = (text: string): string[] => text.split(',').map((word) => word.trim());
export const firstNames = list(`
  Ada, Alan, Amara, Amelia, Andre, Anika, Beatriz, Benjamin, Carlos, Chen, Chloe, Daniel,
  Deepa, Diego, Eleanor, Elijah, Emeka, Emma, Fatima, Felix, Grace, Hannah, Hiro, Ibrahim,
  Ingrid, Isabel, James, Jamal, Julia, Kenji, Laila, Liam, Lucia, Malik, Margaret, Mateo,
  Maya, Mei, Nadia, Noah, Olivia, Omar, Priya, Rafael, Rosa, Samuel, Sofia, Tariq, Thomas,
  Yara
`);

export const lastNames = list(`
  Abernathy, Adeyemi, Alvarez, Anderson, Bauer, Bergstrom, Brennan, Castillo, Chen,
  Chowdhury, Dubois, Eriksen, Fitzgerald, Garcia, Goldberg, Hargrove, Haddad, Ito, Jensen,
  Kaplan, Kim, Kowalski, Lindqvist, Lovelace, Martinez, McAllister, Mensah, Moreau, Nakamura,
  O'Brien, Okafor, Patel, Petrov, Quinn, Ramirez, Rossi, Schmidt, Silva, Singh, Sullivan,
  Tanaka, Thompson, Van der Berg, Vasquez, Wallace, Whitfield, Williams, Yamamoto, Zhang,
  Zimmerman
`);

/** The first part of an organisation's name. */
export const organizationStems = list(`
  Aurora, Bayside, Blue Ridge, Briarwood, Cedar Valley, Crescent, Eastgate, Evergreen,
  Fairmont, Granite, Harborview, Highland, Ironwood, Juniper, Keystone, Lakeshore, Maplewood,
  Meridian, Northwind, Oakridge, Pinecrest, Prairie, Redwood, Riverside, Silver Lake,
  Stonebridge, Summit, Tidewater, Westfield, Willow Creek
`);
export const organizationSuffixes = list(`
  Rotary Club, Alumni Association, Historical Society, Arts Council, Garden Club,
  Community Partners, Medical Group, Parents Association
`);
export const foundationSuffixes = list(`
  Foundation, Family Foundation, Charitable Trust, Community Foundation, Education Fund
`);
export const corporationSuffixes = list(`
  Industries, Holdings, Technologies, Manufacturing Co., Savings Bank, Logistics Inc.,
  Energy LLC, Health Systems
`);

/** City and region at the same index. */
export const cities = list(`
  Portland, Austin, Madison, Boulder, Ann Arbor, Raleigh, Burlington, Savannah, Santa Fe,
  Providence, Ithaca, Asheville, Tucson, Omaha, Spokane, Lexington
`);
export const regions = list(`
  OR, TX, WI, CO, MI, NC, VT, GA, NM, RI, NY, NC, AZ, NE, WA, KY
`);
export const streets = list(`
  Main St, Oak Ave, Maple Dr, College Rd, Elm St, Park Pl, Lake Shore Dr, Hillcrest Ln,
  Washington Blvd, Church St, University Ave, Mill Rd
`);

export const emailDomains = list(`
  example.org, example.com, example.net
`);

/** What a fund supports: "<area> Scholarship Fund", "<area> Endowment", … */
export const fundAreas = list(`
  Athletics, Library, Engineering, Nursing, Music, Financial Aid, Faculty Research,
  Study Abroad, Campus Green, Student Wellness, First-Generation Students, Fine Arts,
  Computer Science, Marine Biology, Public Health, Teacher Education, Veterans Support,
  Writing Center, Community Service, Entrepreneurship
`);
export const fundKinds = list(`
  Scholarship Fund, Endowment, Excellence Fund, Annual Fund, Support Fund, Capital Project,
  Emergency Fund, Chair
`);

/** A gift's subject is one of these followed by its year. */
export const giftSubjects = list(`
  Annual giving, Year-end gift, Giving Day gift, Memorial gift, Reunion class gift,
  Scholarship support, Matching gift, Monthly sustaining gift, Capital campaign payment,
  Gala sponsorship, Tribute gift, Planned gift, Athletics boosters, Library friends,
  Faculty chair support, Emergency student aid
`);
